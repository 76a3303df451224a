/* `ratchet holes TABLE --profile FILE`: the shapes a tuned table has no entry for. */
#include "agents/research/findings.h"
#include "agents/research/holes.h"
#include "runner/cmd/cmd.h"
#include "runner/cmd/cmd_profile.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct rt_cmd_help help = {
	"ratchet holes TABLE --profile FILE [--spec SPEC] [--key-columns M,N,K] [--weight COL] [--top N] [--json]",
	"Find the shapes a profile saw that a tuned table (JSON keyed object or CSV) has no entry for:\n"
	"each falls back to a default tile. Ranks them by their share of the profile's weight (the most\n"
	"filling each could gain), records them as findings, and prints one variant per hole that\n"
	"copies the nearest existing entry, ready to paste into a campaign spec.",
	"The profile is a CSV with a header. For a CSV table, --key-columns names the columns that form\n"
	"the key in both files; for a JSON table, the profile column holding the entry key (default\n"
	"'key'). --weight names the column with each row's weight (time, calls); without it every row\n"
	"counts once. With --spec, FILE is a profiler's output instead (a PyTorch trace, an nsys\n"
	"export, an ncu CSV...): its kernels' keys come from the spec's profile: keys (real kernel\n"
	"names and their launching op's dims to table keys), each weighted by its kernel time.\n"
	"Exit codes: 0 no hole, 1 holes found, 2 usage, 3 runtime error.",
};

/* A YAML flow string: JSON string escaping is valid YAML. */
static char *quoted(const char *s)
{
	json_t *j = json_string(s);
	char *q = json_dumps(j, JSON_ENCODE_ANY);
	json_decref(j);
	return q;
}

int cmd_holes(int argc, char **argv, struct rt_ctx *ctx)
{
	const char *profile = NULL, *keys = NULL, *weight = NULL, *spec = NULL;
	long top = 10;
	const struct rt_opt opts[] = {
		{ "profile", 'p', RT_OPT_STR, &profile, "FILE", "shapes the engine saw (CSV with a header)" },
		{ "key-columns", 'k', RT_OPT_STR, &keys, "A,B", "key columns (CSV table) or the key column (JSON)" },
		{ "weight", 'w', RT_OPT_STR, &weight, "COL", "profile column with each row's weight" },
		{ "spec", 's', RT_OPT_STR, &spec, "SPEC", "FILE is a profiler's output (trace, ncu CSV...): "
		  "its kernels' keys from SPEC's profile: keys" },
		{ "top", 'n', RT_OPT_INT, &top, "N", "suggest variants for the N largest holes (default 10)" },
		{ 0 },
	};
	int npos, code;
	if (cmd_parse(ctx, opts, &help, argc, argv, &npos, &code))
		return code;
	if (npos != 1 || !profile) {
		cmd_error(ctx, "holes: expected a TABLE and --profile FILE");
		fprintf(stderr, "usage: %s\n", help.usage);
		return RT_EXIT_USAGE;
	}
	const char *table = argv[1];
	char *kc_copy = keys ? xstrdup(keys) : NULL;
	const char *kc[16];
	size_t nkc = 0;
	for (char *save = NULL, *t = kc_copy ? strtok_r(kc_copy, ",", &save) : NULL; t && nkc < 16;
	     t = strtok_r(NULL, ",", &save))
		kc[nkc++] = t;
	struct research_holes h;
	struct rt_sb err = RT_SB_INIT;
	struct cmd_research_env env = { 0 };
	if (spec && (code = cmd_research_env_load(ctx, "holes", 0, spec, &env))) {
		free(kc_copy);
		return code;
	}
	int rc = spec ? research_holes_of_profile(profile, env.map, table, kc, nkc, &h, &err) :
			research_holes_find(table, profile, kc, nkc, weight, &h, &err);
	cmd_research_env_release(&env);
	if (rc) {
		cmd_error(ctx, "holes: %s", err.buf);
		rt_sb_release(&err);
		free(kc_copy);
		return rc == RT_EUSAGE || rc == RT_EINVAL || rc == RT_EPARSE ? RT_EXIT_USAGE : RT_EXIT_RUNTIME;
	}
	/* Record every hole as a finding. */
	struct research_table t = { table, table, kc, nkc };
	for (size_t i = 0; i < h.n && !rc; i++) {
		char *ev = xasprintf("%s: weight %.6g (%.1f%% of the profile %s); nearest entry %s", table,
				     h.v[i].weight, h.v[i].share * 100, profile,
				     h.v[i].nearest ? h.v[i].nearest : "none");
		rc = research_record_hole(ctx->db, &t, &h.v[i], h.v[i].share, ev, 0, 0, 0, &err);
		free(ev);
	}
	if (rc) {
		cmd_error(ctx, "holes: %s", err.buf);
		code = RT_EXIT_RUNTIME;
		goto out;
	}
	if (ctx->json) {
		json_t *o = json_pack("{s:s, s:i, s:i, s:i, s:f, s:[]}", "table", table, "entries",
				      (json_int_t)h.entries, "observed", (json_int_t)h.observed, "covered",
				      (json_int_t)h.covered, "covered_share", h.covered_share, "holes");
		json_t *arr = json_object_get(o, "holes");
		for (size_t i = 0; i < h.n; i++) {
			json_t *fields = h.v[i].fields_json ? json_loads(h.v[i].fields_json, JSON_DECODE_ANY, NULL) : json_null();
			json_array_append_new(arr, json_pack("{s:s, s:f, s:f, s:s?, s:o}", "key", h.v[i].key,
							     "weight", h.v[i].weight, "share", h.v[i].share,
							     "nearest", h.v[i].nearest, "nearest_fields",
							     fields ? fields : json_null()));
		}
		char *s = json_dumps(o, JSON_INDENT(2));
		printf("%s\n", s);
		free(s);
		json_decref(o);
	} else {
		printf("%s: %zu entries; the profile saw %zu shape%s, %zu covered (%.1f%% of its weight)\n",
		       table, h.entries, h.observed, h.observed == 1 ? "" : "s", h.covered,
		       h.covered_share * 100);
		if (h.n) {
			printf("\nholes, largest first (filling one can gain at most its share):\n");
			printf("  %7s  %12s  %-24s  %s\n", "share", "weight", "key", "nearest entry");
			for (size_t i = 0; i < h.n; i++)
				printf("  %6.1f%%  %12.6g  %-24s  %s\n", h.v[i].share * 100, h.v[i].weight,
				       h.v[i].key, h.v[i].nearest ? h.v[i].nearest : "-");
			printf("\nsuggested variants (the nearest entry's fields; measure before trusting):\n");
			for (size_t i = 0; i < h.n && (long)i < top; i++) {
				if (!h.v[i].fields_json)
					continue;
				char name[96];
				research_variant_name("fill", h.v[i].key, name, sizeof(name));
				char *qk = quoted(h.v[i].key), *qf = quoted(table);
				printf("  - {name: %s, table: {file: %s, ", name, qf);
				if (h.csv) {
					printf("key_columns: [");
					for (size_t k = 0; k < nkc; k++)
						printf("%s%s", k ? ", " : "", kc[k]);
					printf("], ");
				}
				printf("set: {%s: %s}}}\n", qk, h.v[i].fields_json);
				free(qk);
				free(qf);
			}
		}
	}
	code = h.n ? RT_EXIT_NO : RT_EXIT_OK;
out:
	research_holes_release(&h);
	rt_sb_release(&err);
	free(kc_copy);
	return code;
}
