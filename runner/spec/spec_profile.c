/*
 * profile: how `ratchet profile import` and `ratchet observe` read this
 * campaign's profiles: regexes that classify kernel names into ops (each
 * replaces the default map's pattern for that op; agents/research/profile.c
 * holds the defaults for vLLM, AITER, llama.cpp/ggml and Triton), the
 * annotation that marks a step, the shape carried in a kernel name, and the
 * names of default (untuned) kernels.
 *
 *   profile:
 *     ops: {attention: "attn|fmha", gemm: "gemm|Cijk_"}
 *     step: "^ProfilerStep#"
 *     shape: "_M([0-9]+)_"
 *     fallback: "default"
 */
#include "runner/spec/spec_int.h"

#include <stdlib.h>

static const struct spec_field profile_fields[];

static void parse_one_op(struct spec_ld *ld, yaml_node_t *kn, const char *k, yaml_node_t *vn,
			 const char *path, const char *kp, void *arg)
{
	struct spec_profile *p = arg;
	int i = spec_name_index(ld, kn, path, "op", k, research_op_names);
	const char *re;
	if (i < 0)
		return;
	if (i == RESEARCH_OP_OTHER) {
		spec_lerr(ld, kn, kp, "'other' is what no other op matches; it takes no regex");
		return;
	}
	if ((re = spec_want_scalar(ld, vn, kp, "a regex")) && spec_check_regex(ld, vn, kp, re))
		p->op[i] = xstrdup(re);
}

static void parse_ops(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		      const struct spec_field *f)
{
	(void)f;
	if (spec_want_map(ld, v, path))
		spec_map_each(ld, v, path, parse_one_op, &((struct spec *)base)->profile);
}

static json_t *dump_ops(const void *base, const struct spec_field *f)
{
	(void)f;
	const struct spec_profile *p = &((const struct spec *)base)->profile;
	json_t *o = json_object();
	for (int i = 0; i < RESEARCH_N_OPS; i++)
		if (p->op[i])
			json_object_set_new(o, research_op_names[i], json_string(p->op[i]));
	if (json_object_size(o))
		return o;
	json_decref(o);
	return NULL;
}

/* A regex-valued key. */
static void parse_regex(struct spec_ld *ld, yaml_node_t *v, const char *path, char **out)
{
	const char *re = spec_want_scalar(ld, v, path, "a regex");
	if (re && spec_check_regex(ld, v, path, re))
		*out = xstrdup(re);
}

#define REGEX_FIELD(name)                                                                        \
	static void parse_##name(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base, \
				 const struct spec_field *f)                                      \
	{                                                                                         \
		(void)f;                                                                          \
		parse_regex(ld, v, path, &((struct spec *)base)->profile.name);                   \
	}                                                                                         \
	static json_t *dump_##name(const void *base, const struct spec_field *f)                  \
	{                                                                                         \
		(void)f;                                                                          \
		const char *s = ((const struct spec *)base)->profile.name;                        \
		return s ? json_string(s) : NULL;                                                 \
	}
REGEX_FIELD(step)
REGEX_FIELD(shape)
REGEX_FIELD(fallback)

static const struct spec_field profile_fields[] = {
	{ "ops", SF_CUSTOM, 0, 0, 0, .parse = parse_ops, .dump = dump_ops,
	  .help = "op name -> regex over kernel names (attention, gemm, norm, activation, quantize, communication)" },
	{ "step", SF_CUSTOM, 0, 0, 0, .parse = parse_step, .dump = dump_step,
	  .help = "regex over annotation names that mark one step" },
	{ "shape", SF_CUSTOM, 0, 0, 0, .parse = parse_shape, .dump = dump_shape,
	  .help = "regex whose first group is the shape a kernel name carries" },
	{ "fallback", SF_CUSTOM, 0, 0, 0, .parse = parse_fallback, .dump = dump_fallback,
	  .help = "regex over the names of default (untuned) kernels" },
	{ 0 }
};

void spec_parse_profile(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
			const struct spec_field *f)
{
	(void)f;
	if (!spec_want_map(ld, v, path))
		return;
	((struct spec *)base)->profile.present = true;
	spec_parse_fields(ld, v, path, base, profile_fields, NULL);
}

json_t *spec_dump_profile(const void *base, const struct spec_field *f)
{
	(void)f;
	if (!((const struct spec *)base)->profile.present)
		return NULL;
	return spec_fields_json(base, profile_fields);
}

void spec_profile_release(struct spec_profile *p)
{
	for (int i = 0; i < RESEARCH_N_OPS; i++)
		free(p->op[i]);
	free(p->step);
	free(p->shape);
	free(p->fallback);
}

void spec_profile_def(const struct spec *s, struct research_opmap_def *out)
{
	memset(out, 0, sizeof(*out));
	for (int i = 0; s && i < RESEARCH_N_OPS; i++)
		out->op[i] = s->profile.op[i];
	if (s) {
		out->step = s->profile.step;
		out->shape = s->profile.shape;
		out->fallback = s->profile.fallback;
	}
}
