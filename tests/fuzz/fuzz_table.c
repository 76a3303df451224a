/*
 * Fuzz harness: a table variant's plan, apply and describe, for the format
 * FUZZ_TABLE_FORMAT (tests/fuzz.cmake builds it three times: json, csv,
 * yaml). The input is five parts separated by newlines:
 *
 *     set|replace|delete
 *     the entry key ("v1,v2" of the key columns for CSV)
 *     the value, a JSON object of fields (set and replace)
 *     the key columns, comma-separated (CSV)
 *     the table file's bytes (the rest)
 *
 * Changes the spec loader refuses (a value that is not an object, a key that
 * is not UTF-8, a CSV key with the wrong number of values) are skipped. The promises: plan touches
 * nothing; describe fails exactly when plan does; an applied set or replace
 * plans again to the same bytes (applying it twice changes nothing more)
 * and then describes as "no change".
 */
#include "tests/fuzz/fuzz.h"

#include <string.h>

#include "variants/var.h"

#ifndef FUZZ_TABLE_FORMAT
#define FUZZ_TABLE_FORMAT VAR_TBL_JSON
#endif

static const char *file_name(void)
{
	switch (FUZZ_TABLE_FORMAT) {
	case VAR_TBL_CSV:
		return "t.csv";
	case VAR_TBL_YAML:
		return "t.yaml";
	default:
		return "t.json";
	}
}

/* The key columns "a,b" as a list. */
static void split_columns(const char *s, struct rt_strv *out)
{
	if (!*s)
		return;
	for (const char *p = s;;) {
		const char *q = strchr(p, ',');
		size_t n = q ? (size_t)(q - p) : strlen(p);
		out->v = xrealloc(out->v, (out->n + 1) * sizeof(char *));
		out->v[out->n++] = xstrndup(p, n);
		if (!q)
			break;
		p = q + 1;
	}
}

/* The variant the input describes, or false when the spec would refuse it. */
static bool make_def(const struct fuzz_part *part, struct var_def *v)
{
	memset(v, 0, sizeof(*v));
	v->name = xstrdup("fuzz");
	v->kind = VAR_KIND_TABLE;
	v->table.file = xstrdup(file_name());
	v->table.format = FUZZ_TABLE_FORMAT;
	char op = part[0].n ? part[0].p[0] : 's';
	v->table.op = op == 'd' ? VAR_TBL_DELETE : op == 'r' ? VAR_TBL_REPLACE : VAR_TBL_SET;
	v->table.key = fuzz_str(part[1]);
	json_t *utf8 = json_string(v->table.key); /* libyaml reads specs as UTF-8 only */
	if (!utf8)
		return false;
	json_decref(utf8);
	if (v->table.op != VAR_TBL_DELETE) {
		json_error_t je;
		v->table.value = json_loadb(part[2].p ? part[2].p : "", part[2].n, 0, &je);
		if (!json_is_object(v->table.value))
			return false;
	}
	if (FUZZ_TABLE_FORMAT == VAR_TBL_CSV) {
		char *cols = fuzz_str(part[3]);
		split_columns(cols, &v->table.key_columns);
		free(cols);
		size_t values = 1;
		for (const char *c = v->table.key; *c; c++)
			values += *c == ',';
		if (!v->table.key_columns.n || values != v->table.key_columns.n)
			return false;
	}
	return true;
}

static void def_release(struct var_def *v)
{
	free(v->name);
	free(v->table.file);
	free(v->table.key);
	json_decref(v->table.value);
	rt_strv_release(&v->table.key_columns);
}

/* The table file now holds exactly len bytes of want. */
static void check_file(const char *path, const char *want, size_t len, const char *when)
{
	char *got;
	size_t n;
	FUZZ_CHECK(rt_read_file(path, &got, &n, NULL) == 0, "%s: cannot read the table", when);
	FUZZ_CHECK(n == len && (!n || !memcmp(got, want, n)), "%s: the table holds other bytes", when);
	free(got);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_part part[5];
	fuzz_split(data, size, "\n", part, 5);
	struct var_def v;
	if (!make_def(part, &v)) {
		def_release(&v);
		return 0;
	}
	char *path = fuzz_write(file_name(), part[4].p, part[4].n);
	struct var_ctx ctx = { .workdir = fuzz_dir() };
	const struct var_ops *ops = var_ops_for(VAR_KIND_TABLE);
	struct var_plan p = { 0 }, p2 = { 0 };
	struct rt_sb err = RT_SB_INIT, desc = RT_SB_INIT, log = RT_SB_INIT;
	int rc = ops->plan(&v, &ctx, &p, &err);
	check_file(path, part[4].p, part[4].n, "after plan");
	int drc = ops->describe(&v, &ctx, &p, &desc, &err);
	FUZZ_CHECK(drc == rc, "plan returned %d but describe %d: %s", rc, drc, err.buf);
	if (rc == 0) {
		FUZZ_CHECK(p.n == 1 && p.files[0].has_after, "a table plan without its bytes after");
		FUZZ_CHECK(ops->apply(&v, &ctx, &p, &log, &err) == 0, "apply: %s", err.buf);
		check_file(path, p.files[0].after, p.files[0].after_len, "after apply");
		if (v.table.op != VAR_TBL_DELETE) {
			rc = ops->plan(&v, &ctx, &p2, &err);
			FUZZ_CHECK(rc == 0, "the applied change does not plan again: %s; the table:\n%.*s", err.buf,
				   (int)p.files[0].after_len, p.files[0].after);
			FUZZ_CHECK(p2.files[0].after_len == p.files[0].after_len &&
				   !memcmp(p2.files[0].after, p.files[0].after, p.files[0].after_len),
				   "applying the change twice gives other bytes:\n%s\n---\n%s",
				   p.files[0].after, p2.files[0].after);
			rt_sb_reset(&desc);
			FUZZ_CHECK(ops->describe(&v, &ctx, &p2, &desc, &err) == 0, "describe: %s",
				   err.buf);
			FUZZ_CHECK(strstr(desc.buf, "no change"),
				   "the applied change still describes a change: %s", desc.buf);
		}
	}
	var_plan_release(&p);
	var_plan_release(&p2);
	rt_sb_release(&err);
	rt_sb_release(&desc);
	rt_sb_release(&log);
	free(path);
	def_release(&v);
	return 0;
}
