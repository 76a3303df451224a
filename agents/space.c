/*
 * Spaces (agents/space.h): points as mixed-radix codes, restrictions
 * checked per point, the valid points enumerated, points to and from JSON,
 * and the helpers every strategy over a space shares.
 */
#include "agents/space.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/base/rand.h"

const char *const agent_param_kind_names[] = { "range", "pow2", "values", "choices", "bool", NULL };

void agent_space_release(struct agent_space *sp)
{
	for (size_t i = 0; i < sp->n_params; i++) {
		free(sp->params[i].name);
		json_decref(sp->params[i].values);
	}
	for (size_t i = 0; i < sp->n_restr; i++) {
		agent_expr_free(sp->restr[i]);
		free(sp->restr_text[i]);
	}
	free(sp->params);
	free(sp->restr);
	free(sp->restr_text);
	memset(sp, 0, sizeof(*sp));
}

static size_t radix(const struct agent_space *sp, size_t i)
{
	return json_array_size(sp->params[i].values);
}

uint64_t agent_space_size(const struct agent_space *sp)
{
	uint64_t n = 1;
	for (size_t i = 0; i < sp->n_params; i++) {
		size_t r = radix(sp, i);
		if (r && n > UINT64_MAX / r)
			return UINT64_MAX;
		n *= r;
	}
	return n;
}

size_t agent_point_index(const struct agent_space *sp, uint64_t code, size_t i)
{
	for (size_t k = 0; k < i; k++)
		code /= radix(sp, k);
	return (size_t)(code % radix(sp, i));
}

uint64_t agent_point_with(const struct agent_space *sp, uint64_t code, size_t i, size_t idx)
{
	uint64_t mul = 1;
	for (size_t k = 0; k < i; k++)
		mul *= radix(sp, k);
	size_t old = agent_point_index(sp, code, i);
	return code - (uint64_t)old * mul + (uint64_t)idx * mul;
}

bool agent_point_valid(const struct agent_space *sp, uint64_t code, size_t *failed)
{
	json_t *vals[64];
	json_t **v = sp->n_params <= 64 ? vals : xcalloc(sp->n_params, sizeof(*v));
	for (size_t i = 0; i < sp->n_params; i++) {
		v[i] = json_array_get(sp->params[i].values, (size_t)(code % radix(sp, i)));
		code /= radix(sp, i);
	}
	bool ok = true;
	for (size_t r = 0; r < sp->n_restr && ok; r++) {
		ok = agent_expr_true(sp->restr[r], v);
		if (!ok && failed)
			*failed = r;
	}
	if (v != vals)
		free(v);
	return ok;
}

uint64_t *agent_space_valid(const struct agent_space *sp, size_t *n)
{
	uint64_t total = agent_space_size(sp);
	uint64_t *out = xcalloc(total + 1, sizeof(*out));
	size_t k = 0;
	for (uint64_t c = 0; c < total; c++)
		if (agent_point_valid(sp, c, NULL))
			out[k++] = c;
	*n = k;
	return out;
}

json_t *agent_point_json(const struct agent_space *sp, uint64_t code)
{
	json_t *o = json_object();
	for (size_t i = 0; i < sp->n_params; i++) {
		json_object_set(o, sp->params[i].name,
				json_array_get(sp->params[i].values, (size_t)(code % radix(sp, i))));
		code /= radix(sp, i);
	}
	return o;
}

int agent_point_from_json(const struct agent_space *sp, json_t *o, uint64_t *code)
{
	uint64_t c = 0, mul = 1;
	for (size_t i = 0; i < sp->n_params; i++) {
		json_t *v = json_object_get(o, sp->params[i].name);
		size_t r = radix(sp, i), k = 0;
		while (k < r && !(v && json_equal(json_array_get(sp->params[i].values, k), v)))
			k++;
		if (k == r)
			return RT_ENOENT;
		c += (uint64_t)k * mul;
		mul *= r;
	}
	*code = c;
	return 0;
}

char *agent_point_text(const struct agent_space *sp, uint64_t code)
{
	struct rt_sb sb = RT_SB_INIT;
	for (size_t i = 0; i < sp->n_params; i++) {
		json_t *v = json_array_get(sp->params[i].values, (size_t)(code % radix(sp, i)));
		code /= radix(sp, i);
		char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		size_t tl = t ? strlen(t) : 0;
		bool quoted = json_is_string(v) && tl >= 2;
		rt_sb_addf(&sb, "%s%s=%.*s", i ? " " : "", sp->params[i].name, (int)(quoted ? tl - 2 : tl),
			   t ? t + quoted : "");
		free(t);
	}
	return rt_sb_detach(&sb, NULL);
}

uint64_t *agent_shuffled(const struct agent_search *q, uint64_t salt)
{
	uint64_t *p = xcalloc(q->n_valid + 1, sizeof(*p));
	memcpy(p, q->valid, q->n_valid * sizeof(*p));
	struct rt_rand r;
	rt_rand_seed(&r, q->seed ^ (salt * RT_SPLITMIX64_GAMMA));
	for (size_t i = q->n_valid; i > 1; i--) {
		size_t j = (size_t)rt_rand_below(&r, i);
		uint64_t t = p[i - 1];
		p[i - 1] = p[j];
		p[j] = t;
	}
	return p;
}

bool agent_first_untried(const struct agent_search *q, uint64_t salt, uint64_t *code, size_t *pos)
{
	uint64_t *perm = agent_shuffled(q, salt);
	size_t k = 0;
	while (k < q->n_valid && agent_measured(q, perm[k], 1))
		k++;
	bool hit = k < q->n_valid;
	if (hit) {
		*code = perm[k];
		*pos = k;
	}
	free(perm);
	return hit;
}

long agent_best_obs(const struct agent_search *q)
{
	long best = -1;
	for (size_t i = 0; i < q->n_obs; i++)
		if (q->obs[i].fidelity >= 1 && !isnan(q->obs[i].value) &&
		    (best < 0 || q->obs[i].value > q->obs[best].value))
			best = (long)i;
	return best;
}

bool agent_measured(const struct agent_search *q, uint64_t code, double f)
{
	for (size_t i = 0; i < q->n_obs; i++)
		if (q->obs[i].code == code && q->obs[i].fidelity >= f - 1e-9)
			return true;
	return false;
}

bool agent_start_due(const struct agent_search *q)
{
	return q->start >= 0 && !agent_measured(q, (uint64_t)q->start, 1) &&
	       agent_point_valid(q->sp, (uint64_t)q->start, NULL);
}

bool agent_gains(const struct agent_search *q, double best, double v)
{
	return !isnan(v) && (best == -INFINITY || v > best + fabs(best) * fmax(q->min_gain, 0));
}

int agent_code_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

struct agent_seen agent_seen_of(const struct agent_obs *obs, size_t n)
{
	struct agent_seen s = { xcalloc(n + 1, sizeof(uint64_t)), 0 };
	for (size_t i = 0; i < n; i++)
		if (obs[i].fidelity >= 1 - 1e-9)
			s.code[s.n++] = obs[i].code;
	qsort(s.code, s.n, sizeof(*s.code), agent_code_cmp);
	return s;
}

bool agent_seen_has(const struct agent_seen *s, uint64_t code)
{
	return bsearch(&code, s->code, s->n, sizeof(*s->code), agent_code_cmp) != NULL;
}
