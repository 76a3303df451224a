/*
 * The top-level table of the spec (one row per section, each parsed by its
 * own file), repeats:, and the defaults of the top-level settings.
 */
#include "runner/spec/spec_int.h"

/* workdir is read first, by spec_load_text(): nothing left to do here. */
static void noop_parse(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		       const struct spec_field *f)
{
}

static json_t *dump_workdir(const void *base, const struct spec_field *f)
{
	return json_string(((const struct spec *)base)->workdir);
}

const struct spec_field spec_repeats_fields[] = {
	{ "min", SF_INT, SPEC_OFF(struct spec, repeats.min), 0, FL_LO, 1, .help = "samples per arm at least" },
	{ "max", SF_INT, SPEC_OFF(struct spec, repeats.max), 0, FL_LO, 1, .help = "samples per arm at most" },
	{ "confidence", SF_DBL, SPEC_OFF(struct spec, repeats.confidence), 0, FL_LOX | FL_HIX, 0, 1,
	  .help = "confidence of the interval that decides" },
	{ "warmup", SF_INT, SPEC_OFF(struct spec, repeats.warmup), 0, FL_LO, 0, .help = "warm-up runs per arm" },
	{ "interleave", SF_BOOL, SPEC_OFF(struct spec, repeats.interleave), .help = "alternate A and B runs" },
	{ 0 }
};

const struct spec_field spec_top_fields[] = {
	{ "name", SF_STR, SPEC_OFF(struct spec, name), 0, FL_REQ, .help = "campaign name" },
	{ "workdir", SF_CUSTOM, 0, 0, 0, .parse = noop_parse, .dump = dump_workdir,
	  .help = "folder relative paths resolve against; default the spec's folder" },
	{ "seed", SF_U64, SPEC_OFF(struct spec, seed), .help = "seed for everything random" },
	{ "engine", SF_CUSTOM, 0, 0, FL_OMIT0, .parse = spec_parse_engine,
	  .dump = spec_dump_engine,
	  .help = "a server started for every measurement" },
	{ "benchmarks", SF_CUSTOM, 0, 0, FL_REQ, .parse = spec_parse_benches,
	  .dump = spec_dump_benches,
	  .help = "what is measured" },
	{ "objective", SF_CUSTOM, 0, 0, FL_REQ, .parse = spec_parse_objective,
	  .dump = spec_dump_objective,
	  .help = "the metric to improve" },
	{ "constraints", SF_CUSTOM, 0, 0, 0, .parse = spec_parse_constraints,
	  .dump = spec_dump_constraints,
	  .help = "bounds every kept change must respect" },
	{ "repeats", SF_SUB, .sub = spec_repeats_fields, .help = "sampling and decisions" },
	{ "gate", SF_CUSTOM, 0, 0, FL_OMIT0, .parse = spec_parse_gate,
	  .dump = spec_dump_gate,
	  .help = "accuracy gate" },
	{ "log_events", SF_CUSTOM, 0, 0, 0, .parse = spec_parse_log_events,
	  .dump = spec_dump_log_events,
	  .help = "engine log regexes counted per iteration" },
	{ "profile", SF_CUSTOM, 0, 0, FL_OMIT0, .parse = spec_parse_profile,
	  .dump = spec_dump_profile,
	  .help = "how imported profiles classify kernels into ops" },
	{ "variants", SF_CUSTOM, 0, 0, 0, .parse = spec_parse_variants,
	  .dump = spec_dump_variants,
	  .help = "the changes to try, one each" },
	{ "strategy", SF_ENUM, SPEC_OFF(struct spec, strategy), .names = agent_strategy_names,
	  .help = "how changes are proposed: a row of agents/agent.h's AGENT_STRATEGIES (list; auto with a space:)" },
	{ "max_iterations", SF_INT, SPEC_OFF(struct spec, max_iterations), 0, FL_LO, 0,
	  .help = "the campaign's iterations, the baseline included (as --max-iterations counts a run's); 0: no cap" },
	{ "space", SF_CUSTOM, 0, 0, FL_OMIT0, .parse = spec_parse_space, .dump = spec_dump_space,
	  .help = "parameters to search, their bindings and restrictions" },
	{ "executor", SF_CUSTOM, 0, 0, FL_OMIT0, .parse = spec_parse_exec, .dump = spec_dump_exec,
	  .help = "local, or slurm: measurements as job steps on allocated nodes" },
	{ "llm", SF_CUSTOM, 0, 0, FL_OMIT0, .parse = spec_parse_llm, .dump = spec_dump_llm,
	  .help = "strategy llm: the chat endpoint, its budget and what it may touch" },
	{ "telemetry", SF_CUSTOM, 0, 0, FL_OMIT0, .parse = spec_parse_telemetry,
	  .dump = spec_dump_telemetry,
	  .help = "clocks, power, temperature and throttling sampled during benchmarks" },
	{ "devices", SF_CUSTOM, 0, 0, FL_OMIT0, .parse = spec_parse_devices, .dump = spec_dump_devices,
	  .help = "the local device pool, one worker each: [cuda:0, cuda:1]" },
	{ 0 }
};

void spec_defaults(struct spec *s)
{
	s->seed = 1;
	s->repeats.min = 3;
	s->repeats.max = 10;
	s->repeats.confidence = 0.95;
	s->repeats.interleave = true;
	s->strategy = AGENT_STRAT_LIST;
	spec_telemetry_defaults(&s->telemetry);
}
