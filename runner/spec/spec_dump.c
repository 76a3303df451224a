/*
 * The normalized spec: the field tables turned back into a JSON tree (every
 * default filled in, durations in seconds, percentages as fractions, paths
 * absolute), one dumper per field type, and that tree printed as YAML by
 * rt_yaml (runner/base/rt_yaml.h), which spec_load_text() reads back to the
 * same structs. `ratchet check` prints one or the other.
 */
#include "runner/spec/spec_int.h"
#include "runner/base/rt_yaml.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

json_t *spec_json_num(double x)
{
	if (isinf(x) && x > 0)
		return json_string("inf"); /* FL_INF's word */
	if (x == floor(x) && fabs(x) < 9007199254740992.0)
		return json_integer((json_int_t)x);
	return json_real(x);
}

json_t *spec_strv_json(const struct rt_strv *v)
{
	json_t *a = json_array();
	for (size_t i = 0; i < v->n; i++)
		json_array_append_new(a, json_string(v->v[i]));
	return a;
}

json_t *spec_envv_json(const struct rt_envv *e)
{
	json_t *o = json_object();
	for (size_t i = 0; i < e->n; i++)
		json_object_set_new(o, e->v[i].name, e->v[i].value ? json_string(e->v[i].value) : json_null());
	return o;
}

/* ---- one dumper per field type; NULL leaves the key out ---- */

#define SRC(T) ((const T *)((const char *)base + f->off))
#define OMIT0 (f->flags & FL_OMIT0)

static json_t *dump_str(const void *base, const struct spec_field *f)
{
	const char *s = *SRC(char *);
	return s ? json_string(s) : (f->flags & FL_NULLOK) ? json_null() : NULL;
}

static json_t *dump_int(const void *base, const struct spec_field *f)
{
	int x = *SRC(int);
	return OMIT0 && !x ? NULL : json_integer(x);
}

static json_t *dump_uint(const void *base, const struct spec_field *f)
{
	unsigned x = *SRC(unsigned);
	return OMIT0 && !x ? NULL : json_integer(x);
}

/* Above INT64_MAX as a string: JSON integers are signed. */
static json_t *dump_u64(const void *base, const struct spec_field *f)
{
	uint64_t x = *SRC(uint64_t);
	char buf[32];
	if (OMIT0 && !x)
		return NULL;
	if (x <= (uint64_t)INT64_MAX)
		return json_integer((json_int_t)x);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)x);
	return json_string(buf);
}

static json_t *dump_dbl(const void *base, const struct spec_field *f)
{
	double x = *SRC(double);
	return OMIT0 && x == 0 ? NULL : spec_json_num(x);
}

/* Above 100% as "150%": a bare number above 1 is not a fraction. */
static json_t *dump_frac(const void *base, const struct spec_field *f)
{
	double x = *SRC(double);
	char buf[40];
	if (OMIT0 && x == 0)
		return NULL;
	if (x <= 1)
		return spec_json_num(x);
	rt_yaml_real_text(x * 100, buf, sizeof(buf) - 1);
	strcat(buf, "%");
	return json_string(buf);
}

static json_t *dump_bool(const void *base, const struct spec_field *f)
{
	return json_boolean(*SRC(bool));
}

static json_t *dump_size(const void *base, const struct spec_field *f)
{
	return json_integer((json_int_t)*SRC(size_t));
}

static json_t *dump_enum(const void *base, const struct spec_field *f)
{
	int x = *SRC(int);
	return OMIT0 && !x ? NULL : json_string(f->names[x]);
}

static json_t *dump_strv(const void *base, const struct spec_field *f)
{
	return OMIT0 && !SRC(struct rt_strv)->n ? NULL : spec_strv_json(SRC(struct rt_strv));
}

static json_t *dump_envv(const void *base, const struct spec_field *f)
{
	return SRC(struct rt_envv)->n ? spec_envv_json(SRC(struct rt_envv)) : NULL;
}

static json_t *dump_dim3(const void *base, const struct spec_field *f)
{
	json_int_t d[3];
	for (int i = 0; i < 3; i++)
		d[i] = f->type == SF_DIM3L ? (json_int_t)SRC(uint64_t)[i] : (json_int_t)SRC(unsigned)[i];
	return OMIT0 && !d[0] ? NULL : json_pack("[III]", d[0], d[1], d[2]);
}

static json_t *dump_numv(const void *base, const struct spec_field *f)
{
	const void *arr = *SRC(void *);
	size_t n = *(const size_t *)((const char *)base + f->off2);
	if (OMIT0 && !n)
		return NULL;
	json_t *v = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(v, f->type == SF_DBLV
						 ? spec_json_num(((const double *)arr)[i])
						 : json_integer((json_int_t)((const uint64_t *)arr)[i]));
	return v;
}

static json_t *dump_sub(const void *base, const struct spec_field *f)
{
	json_t *v = spec_fields_json(base, f->sub);
	if (json_object_size(v))
		return v;
	json_decref(v);
	return NULL;
}

static json_t *dump_custom(const void *base, const struct spec_field *f)
{
	return f->dump ? f->dump(base, f) : NULL;
}

static const spec_dump_fn dumpers[SF_NTYPES] = {
	[SF_STR] = dump_str,	 [SF_INT] = dump_int,	  [SF_U64] = dump_u64,
	[SF_UINT] = dump_uint,	 [SF_DBL] = dump_dbl,	  [SF_DUR] = dump_dbl,
	[SF_FRAC] = dump_frac,	 [SF_BOOL] = dump_bool,	  [SF_SIZE] = dump_size,
	[SF_ENUM] = dump_enum,	 [SF_STRV] = dump_strv,	  [SF_ENVV] = dump_envv,
	[SF_DIM3U] = dump_dim3,	 [SF_DIM3L] = dump_dim3,  [SF_DBLV] = dump_numv,
	[SF_U64V] = dump_numv,	 [SF_SUB] = dump_sub,	  [SF_CUSTOM] = dump_custom,
};

json_t *spec_fields_json(const void *base, const struct spec_field *tbl)
{
	json_t *o = json_object();
	for (const struct spec_field *f = tbl; f->key; f++) {
		json_t *v = dumpers[f->type](base, f);
		if (v)
			json_object_set_new(o, f->key, v);
	}
	return o;
}

json_t *spec_to_json(const struct spec *s)
{
	return spec_fields_json(s, spec_top_fields);
}

void spec_dump(const struct spec *s, struct rt_sb *out)
{
	json_t *j = spec_to_json(s);
	struct rt_sb err = RT_SB_INIT;
	if (rt_yaml_from_json(j, out, &err))
		rt_sb_addf(out, "# %s\n", err.buf); /* only when libyaml runs out of memory */
	rt_sb_release(&err);
	json_decref(j);
}
