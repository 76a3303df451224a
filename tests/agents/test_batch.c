/*
 * Unit tests of agents/batch.c, the batch mode of a device pool's round:
 * greedy's next N trials (its confirmation alone, its decisions those of the
 * serial run), list's next N untried variants as trials and the round's
 * winner confirmed alone, and N distinct points from each space strategy,
 * the same for the same seed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agent.h"
#include "agents/space.h"

static struct agent_attempt att(size_t v, enum db_iter_state st, enum db_iter_role role, double eff, bool passed,
				int round)
{
	return (struct agent_attempt){ .variant = v, .state = st, .role = role, .effect = eff, .passed = passed,
				       .round = round };
}

static size_t batch(enum agent_strategy k, size_t nv, const struct agent_attempt *h, size_t nh, size_t max,
		    struct agent_proposal *out)
{
	struct agent_ctx x = { .strategy = k, .n_variants = nv, .hist = h, .n_hist = nh, .seed = 1, .rounds = true };
	size_t n = 99;
	int r = agent_next_batch(&x, max, out, &n, NULL);
	assert_true(r == 0 || r == 1);
	assert_int_equal(r, n > 0);
	return n;
}

static void test_greedy(void **state)
{
	(void)state;
	struct agent_proposal p[8];
	assert_int_equal(batch(AGENT_STRAT_GREEDY, 5, NULL, 0, 3, p), 3);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(p[i].variant, i);
		assert_int_equal(p[i].role, DB_ROLE_TRIAL);
	}
	struct agent_attempt h[8];
	h[0] = att(0, DB_ITER_REVERTED, DB_ROLE_TRIAL, 0.02, true, 1);
	h[1] = att(1, DB_ITER_REVERTED, DB_ROLE_TRIAL, 0.05, true, 1);
	h[2] = att(2, DB_ITER_REVERTED, DB_ROLE_TRIAL, -0.01, false, 1);
	assert_int_equal(batch(AGENT_STRAT_GREEDY, 5, h, 3, 3, p), 2); /* what is left of greedy's round */
	assert_int_equal(p[0].variant, 3);
	assert_int_equal(p[1].variant, 4);
	h[3] = att(3, DB_ITER_REVERTED, DB_ROLE_TRIAL, 0.01, true, 2);
	h[4] = att(4, DB_ITER_INTERRUPTED, DB_ROLE_TRIAL, NAN, false, 2);
	assert_int_equal(batch(AGENT_STRAT_GREEDY, 5, h, 5, 3, p), 1); /* the interrupted one again */
	assert_int_equal(p[0].variant, 4);
	h[5] = att(4, DB_ITER_REVERTED, DB_ROLE_TRIAL, 0.0, false, 3);
	assert_int_equal(batch(AGENT_STRAT_GREEDY, 5, h, 6, 3, p), 1); /* the confirmation, alone */
	assert_int_equal(p[0].role, DB_ROLE_CONFIRM);
	assert_int_equal(p[0].variant, 1);
	/* One device: the same sequence of proposals as agent_next. */
	struct agent_ctx x = { .strategy = AGENT_STRAT_GREEDY, .n_variants = 5, .hist = h, .n_hist = 3, .rounds = true };
	struct agent_proposal one;
	memset(&one, 0, sizeof(one));
	assert_int_equal(agent_next(&x, &one, NULL), 1);
	assert_int_equal(batch(AGENT_STRAT_GREEDY, 5, h, 3, 1, p), 1);
	assert_int_equal(p[0].variant, one.variant);
	assert_int_equal(p[0].role, one.role);
}

static void test_list(void **state)
{
	(void)state;
	struct agent_proposal p[8];
	assert_int_equal(batch(AGENT_STRAT_LIST, 6, NULL, 0, 4, p), 4);
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(p[i].variant, i);
		assert_int_equal(p[i].role, DB_ROLE_TRIAL);
	}
	struct agent_attempt h[8];
	h[0] = att(0, DB_ITER_REVERTED, DB_ROLE_TRIAL, 0.02, true, 1);
	h[1] = att(1, DB_ITER_REVERTED, DB_ROLE_TRIAL, 0.07, true, 1);
	h[2] = att(2, DB_ITER_FAILED, DB_ROLE_TRIAL, NAN, false, 1);
	h[3] = att(3, DB_ITER_REVERTED, DB_ROLE_TRIAL, 0.09, false, 1); /* larger, but did not pass */
	assert_int_equal(batch(AGENT_STRAT_LIST, 6, h, 4, 4, p), 1);
	assert_int_equal(p[0].role, DB_ROLE_CONFIRM);
	assert_int_equal(p[0].variant, 1);
	/* a confirmation a kill cut short is proposed again, alone */
	h[4] = att(1, DB_ITER_INTERRUPTED, DB_ROLE_CONFIRM, NAN, false, 1);
	assert_int_equal(batch(AGENT_STRAT_LIST, 6, h, 5, 4, p), 1);
	assert_int_equal(p[0].role, DB_ROLE_CONFIRM);
	assert_int_equal(p[0].variant, 1);
	h[4] = att(1, DB_ITER_KEPT, DB_ROLE_CONFIRM, 0.06, true, 1);
	assert_int_equal(batch(AGENT_STRAT_LIST, 6, h, 5, 4, p), 2); /* the rest, a new round */
	assert_int_equal(p[0].variant, 4);
	assert_int_equal(p[1].variant, 5);
	h[5] = att(4, DB_ITER_REVERTED, DB_ROLE_TRIAL, -0.02, false, 2);
	h[6] = att(5, DB_ITER_REVERTED, DB_ROLE_TRIAL, 0.0, false, 2);
	assert_int_equal(batch(AGENT_STRAT_LIST, 6, h, 7, 4, p), 0); /* nothing passed, nothing left */
	assert_non_null(strstr(p[0].note, "")); /* done */
}

static void make_space(struct agent_space *sp)
{
	memset(sp, 0, sizeof(*sp));
	sp->n_params = 2;
	sp->params = xcalloc(2, sizeof(*sp->params));
	sp->params[0] = (struct agent_param){ xstrdup("X"), AGENT_PARAM_POW2, json_pack("[iiiiii]", 1, 2, 4, 8, 16, 32) };
	sp->params[1] = (struct agent_param){ xstrdup("Y"), AGENT_PARAM_RANGE, json_array() };
	for (int i = 0; i < 6; i++)
		json_array_append_new(sp->params[1].values, json_integer(i));
}

static size_t points(enum agent_strategy k, const struct agent_space *sp, uint64_t seed, size_t max,
		     struct agent_proposal *out)
{
	const struct agent_space *spaces[] = { sp };
	const char *labels[] = { "t" };
	const struct agent_obs *op[] = { NULL };
	size_t nobs[] = { 0 };
	struct agent_ctx x = { .strategy = k, .n_targets = 1, .spaces = spaces, .labels = labels, .obs = op,
			       .n_obs = nobs, .seed = seed, .min_gain = 0.01, .rounds = true };
	size_t n = 0;
	struct rt_sb err = RT_SB_INIT;
	int r = agent_next_batch(&x, max, out, &n, &err);
	assert_int_equal(r, 1);
	rt_sb_release(&err);
	return n;
}

static void test_spaces(void **state)
{
	(void)state;
	struct agent_space sp;
	make_space(&sp);
	enum agent_strategy ks[] = { AGENT_STRAT_RANDOM, AGENT_STRAT_COORDINATE, AGENT_STRAT_HALVING,
				     AGENT_STRAT_MODEL };
	for (size_t k = 0; k < sizeof(ks) / sizeof(ks[0]); k++) {
		struct agent_proposal a[4], b[4];
		size_t n = points(ks[k], &sp, 7, 4, a);
		assert_true(n >= 2); /* more than one point per round */
		assert_int_equal(points(ks[k], &sp, 7, 4, b), n);
		for (size_t i = 0; i < n; i++) {
			assert_true(a[i].point);
			assert_int_equal(a[i].role, DB_ROLE_TRIAL);
			assert_true(a[i].code == b[i].code); /* deterministic from the seed */
			for (size_t j = 0; j < i; j++)
				assert_false(a[i].code == a[j].code); /* distinct */
		}
	}
	agent_space_release(&sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_greedy),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_spaces),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
