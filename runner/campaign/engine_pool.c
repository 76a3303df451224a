/*
 * The engines a campaign keeps up between samples (engine.restart,
 * engine.concurrent; see campaign_int.h). An engine is known by the
 * configuration it runs: the iteration whose files are in place when it
 * started (the best's, or this iteration's candidate) and the sha256 of its
 * argv and environment before placeholders. A sample reuses the engine
 * whose key matches; otherwise the least recently used one is stopped when
 * engine.concurrent are up, and a new one is launched. Its identity is
 * proven again before every sample, reused or not.
 *
 *   sample  every engine is stopped after its sample (the first wave's way);
 *   arm     (default) reused by the samples of one iteration: a
 *           non-interleaved iteration starts two engines, and both arms
 *           are measured on engines of the same age, each with one cold
 *           start, so that a warm best never meets a cold candidate;
 *   switch  reused until the configuration changes, across iterations: a
 *           kept candidate's engine goes on as the next best's.
 *
 * Why arm is the default: the restart noise it removes (one cold start per
 * arm and iteration instead of one per sample) is most of the cost of a
 * real engine (a 27B vLLM spends minutes loading, compiling and capturing
 * graphs), and it keeps the two arms symmetric. switch saves at most one
 * more start per kept iteration, at the price of comparing a best engine
 * warmed by earlier iterations (prefix caches, allocator state) with a
 * fresh candidate.
 *
 * Two engines up at once (concurrent: 2, each on its own free port) make
 * interleaved A/B free of restarts. They are valid only when the engine
 * reads what the variants touch (tables, patched sources) at start-up: the
 * best's engine keeps running while the candidate's files are in place.
 */
#include "runner/campaign/campaign_int.h"
#include "runner/campaign/exec.h"

#include <string.h>

/* The key of a configuration: the iteration whose files it runs, and its
 * argv and environment before placeholders. */
static void config_key(struct camp *c, int64_t key_iter, const struct var_config *cfg, char out[65])
{
	struct rt_sb sb = RT_SB_INIT;
	rt_sb_addf(&sb, "%lld", (long long)key_iter);
	struct camp_cmdline cl;
	camp_cmdline(c, cfg, &cl);
	for (size_t i = 0; cl.argv[i]; i++) {
		rt_sb_addc(&sb, 0);
		rt_sb_adds(&sb, cl.argv[i]);
	}
	for (size_t i = 0; i < cl.env.n; i++) {
		rt_sb_addf(&sb, "%c%s=%c", 0, cl.env.v[i].name, cl.env.v[i].value ? 1 : 0);
		rt_sb_adds(&sb, cl.env.v[i].value ? cl.env.v[i].value : "");
	}
	camp_cmdline_release(&cl);
	rt_sha256_hex(sb.buf, sb.len, out);
	rt_sb_release(&sb);
}

/* Stop held engine i, store its log where it was last used, free its slot.
 * Slots never move: the engine keeps pointers into its launch (the nonce). */
static void drop(struct camp *c, size_t i)
{
	struct camp_held *h = &c->pool.h[i];
	camp_exec_engine_stopping(c);
	run_engine_stop(h->l.eng);
	if (h->log_name)
		camp_store_engine_log(c, h->iter, h->l.eng, h->log_name);
	camp_launch_release(&h->l);
	memset(h, 0, sizeof(*h));
	c->pool.n--;
}

void camp_engines_stop(struct camp *c)
{
	for (size_t i = 0; i < RT_ARRAY_SIZE(c->pool.h); i++)
		if (c->pool.h[i].up)
			drop(c, i);
}

/* Room for one more engine: under restart: arm, engines of an earlier
 * iteration go; then the least recently used while concurrent are up. */
static void make_room(struct camp *c, int64_t iter)
{
	const struct spec_engine *en = &c->s->engine;
	const size_t slots = RT_ARRAY_SIZE(c->pool.h);
	for (size_t i = 0; i < slots; i++)
		if (c->pool.h[i].up && en->restart == SPEC_RESTART_ARM && c->pool.h[i].iter != iter)
			drop(c, i);
	while (c->pool.n && c->pool.n >= (size_t)en->concurrent) {
		size_t old = slots;
		for (size_t i = 0; i < slots; i++)
			if (c->pool.h[i].up && (old == slots || c->pool.h[i].used < c->pool.h[old].used))
				old = i;
		drop(c, old);
	}
}

int camp_engine_get(struct camp *c, int64_t iter, int arm, const struct var_config *cfg,
		    struct camp_launch **out, struct rt_sb *err)
{
	int64_t key_iter = arm == 1 || !c->best_iter ? iter : c->best_iter;
	char key[65];
	config_key(c, key_iter, cfg, key);
	struct camp_held *h = NULL;
	for (size_t i = 0; i < RT_ARRAY_SIZE(c->pool.h) && !h; i++)
		if (c->pool.h[i].up && !strcmp(c->pool.h[i].key, key) &&
		    (c->s->engine.restart != SPEC_RESTART_ARM || c->pool.h[i].iter == iter))
			h = &c->pool.h[i];
	if (!h) {
		make_room(c, iter);
		for (size_t i = 0; i < RT_ARRAY_SIZE(c->pool.h) && !h; i++)
			if (!c->pool.h[i].up)
				h = &c->pool.h[i];
		int rc = camp_launch_engine(c, iter, arm, cfg, &h->l, err);
		if (rc) {
			camp_launch_release(&h->l);
			return rc;
		}
		h->up = true;
		c->pool.n++;
		c->pool.launches++;
		memcpy(h->key, key, sizeof(h->key));
	}
	h->iter = iter;
	h->used = ++c->pool.tick;
	h->log_name = NULL;
	*out = &h->l;
	return 0;
}

void camp_engine_put(struct camp *c, struct camp_launch *l, bool failed, const char *log_name)
{
	for (size_t i = 0; i < RT_ARRAY_SIZE(c->pool.h); i++) {
		if (!c->pool.h[i].up || &c->pool.h[i].l != l)
			continue;
		c->pool.h[i].log_name = log_name;
		/* a Slurm step belongs to its sample: engines never outlive it there */
		if (failed || c->s->engine.restart == SPEC_RESTART_SAMPLE || camp_exec_sample_scoped(c))
			drop(c, i);
		return;
	}
}
