/*
 * engine: the server the benchmarks measure. Its keys, defaults (host
 * 127.0.0.1, ready /health within 300 s, identity /v1/models with the port
 * owner proven, 10 s stop grace, 64 MiB log cap, restart: arm, one engine at
 * a time), and the nonce check: identity.nonce follows whether the command,
 * the environment or identity.model passes {nonce}.
 */
#include "runner/spec/spec_int.h"

#include <stdlib.h>
#include <string.h>

static const struct spec_field ready_fields[] = {
	{ "http", SF_STR, SPEC_OFF(struct spec_engine, ready_http), 0, FL_TMPL,
	  .help = "readiness path, polled until 200" },
	{ "timeout", SF_DUR, SPEC_OFF(struct spec_engine, ready_timeout_s), 0, FL_LOX, 0,
	  .help = "how long to wait for readiness (seconds)" },
	{ 0 }
};

static const struct spec_field identity_fields[] = {
	{ "http", SF_STR, SPEC_OFF(struct spec_engine, identity_http), 0, FL_NULLOK | FL_TMPL,
	  .help = "path listing the served model; null disables the model check" },
	{ "model", SF_STR, SPEC_OFF(struct spec_engine, model), 0, FL_OMIT0 | FL_TMPL,
	  .help = "expected served model name, placeholders expanded per launch; default: the one seen at baseline" },
	{ "port_owner", SF_BOOL, SPEC_OFF(struct spec_engine, port_owner),
	  .help = "the listening socket must belong to the engine's process tree (false for docker/podman run)" },
	{ "nonce", SF_BOOL, SPEC_OFF(struct spec_engine, nonce_check),
	  .help = "the identity response must echo {nonce}; default: when the command passes {nonce}" },
	{ 0 }
};

const struct spec_field spec_engine_fields[] = {
	{ "command", SF_STRV, SPEC_OFF(struct spec_engine, command), 0, FL_REQ | FL_TMPL,
	  .help = "argv of the server; placeholders allowed" },
	{ "env", SF_ENVV, SPEC_OFF(struct spec_engine, env), 0, FL_TMPL,
	  .help = "environment added to the inherited one; null unsets" },
	{ "host", SF_STR, SPEC_OFF(struct spec_engine, host), .help = "address the engine listens on" },
	{ "port", SF_INT, SPEC_OFF(struct spec_engine, port), 0, FL_LO | FL_HI, 0, 65535,
	  .help = "0: a free port per launch, passed as {port}" },
	{ "ready", SF_SUB, .sub = ready_fields, .help = "readiness probe" },
	{ "identity", SF_SUB, .sub = identity_fields, .help = "identity proof" },
	{ "stop_grace", SF_DUR, SPEC_OFF(struct spec_engine, stop_grace_s), .help = "SIGTERM to SIGKILL grace (seconds)" },
	{ "log_cap", SF_SIZE, SPEC_OFF(struct spec_engine, log_cap_bytes), .help = "engine log cap (bytes)" },
	{ "restart", SF_ENUM, SPEC_OFF(struct spec_engine, restart), .names = spec_restart_names,
	  .help = "arm: reuse within an arm of an iteration; sample: restart every sample; switch: only when the configuration changes" },
	{ "concurrent", SF_INT, SPEC_OFF(struct spec_engine, concurrent), 0, FL_LO | FL_HI, 1, 2,
	  .help = "engines kept up at once: 2 keeps best and candidate up (each on its own free port)" },
	{ "provenance", SF_STRV, SPEC_OFF(struct spec_engine, provenance), 0, FL_TMPL | FL_OMIT0,
	  .help = "command whose output is stored with each launch's provenance (pip freeze)" },
	{ 0 }
};


const char *const spec_restart_names[] = { "arm", "sample", "switch", NULL };

static bool strv_has(const struct rt_strv *v, const char *needle)
{
	for (size_t i = 0; i < v->n; i++)
		if (strstr(v->v[i], needle))
			return true;
	return false;
}

/* Two engines up at once need two ports, and engines that outlive a sample. */
static void check_lifetime(struct spec_ld *ld, yaml_node_t *v, const struct spec_engine *e)
{
	yaml_node_t *cn = spec_map_get(ld, v, "concurrent");
	if (e->concurrent < 2 || !cn)
		return;
	if (e->port)
		spec_lerr(ld, cn, "engine.concurrent",
			  "2 engines cannot share port %d: set engine.port: 0 (a free port each, passed as {port})",
			  e->port);
	if (e->restart == SPEC_RESTART_SAMPLE)
		spec_lerr(ld, cn, "engine.concurrent", "2 keeps engines up, but engine.restart: sample stops each after its sample");
}

void spec_parse_engine(struct spec_ld *ld, yaml_node_t *v, const char *path, void *base,
		       const struct spec_field *f)
{
	struct spec_engine *e = &((struct spec *)base)->engine;
	if (!spec_want_map(ld, v, path))
		return;
	e->present = true;
	e->pos = spec_node_pos(v);
	e->host = xstrdup("127.0.0.1");
	e->ready_http = xstrdup("/health");
	e->ready_timeout_s = 300;
	e->identity_http = xstrdup("/v1/models");
	e->stop_grace_s = 10;
	e->log_cap_bytes = (size_t)64 << 20;
	e->port_owner = true;
	e->restart = SPEC_RESTART_ARM;
	e->concurrent = 1;
	spec_parse_fields(ld, v, path, e, spec_engine_fields, NULL);
	yaml_node_t *cn = spec_map_get(ld, v, "command");
	if (cn && cn->type == YAML_SEQUENCE_NODE && e->command.n == 0)
		spec_lerr(ld, cn, "engine.command", "an empty argv");
	bool uses = strv_has(&e->command, "{nonce}");
	for (size_t i = 0; i < e->env.n; i++)
		uses |= e->env.v[i].value && strstr(e->env.v[i].value, "{nonce}");
	uses |= e->model && strstr(e->model, "{nonce}");
	yaml_node_t *nn = spec_map_get(ld, spec_map_get(ld, v, "identity"), "nonce");
	if (!nn)
		e->nonce_check = uses;
	else if (e->nonce_check && !uses)
		spec_lerr(ld, nn, "engine.identity.nonce",
			  "true, but engine.command and engine.env never pass {nonce}");
	check_lifetime(ld, v, e);
}

json_t *spec_dump_engine(const void *base, const struct spec_field *f)
{
	const struct spec_engine *e = &((const struct spec *)base)->engine;
	return e->present ? spec_fields_json(e, spec_engine_fields) : NULL;
}
