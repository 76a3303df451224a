/*
 * Telemetry of a sample (the spec's telemetry: section): the sampler
 * (runner/device/sampler.h) runs while a sample's benchmarks run, and its
 * medians become the metrics of benchmark "telemetry" (SPEC_TELEMETRY_METRICS),
 * stored and compared like any other, so constraints can bound them. A
 * sample during which the device said it was throttled by power or heat is
 * marked: metric telemetry.throttled = 1 and a fact telemetry.throttled
 * naming the arm, sample and reasons; the decision says how many it used.
 * The device is chosen once per campaign and said as fact
 * telemetry.device (with the GPU's UUID and PCI bus id: a pool worker's
 * index 0 is the GPU it is pinned to), with the reason when there is none to read (under
 * executor slurm the measured device is on another node: none unless the
 * spec names one).
 */
#include "runner/campaign/campaign_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runner/bench/bench.h"
#include "runner/device/sampler.h"

static const char *const arm_names[] = { "best", "cand" };

static void tel_fact(struct camp *c, int64_t iter, const char *key, const char *value)
{
	struct rt_sb err = RT_SB_INIT;
	if (db_fact_add(c->db, c->cid, iter, key, value, &err))
		camp_warn(c, key, &err);
	rt_sb_release(&err);
}

/* The first GPU backend with a device, else "" with the reasons in why. */
static void tel_auto(struct camp_tel_dev *t, struct rt_sb *why)
{
	static const char *const gpus[] = { "cuda", "hip", "ze" };
	if (getenv("RATCHET_TELEMETRY_FAKE")) { /* tests: the host backend's stand-in */
		snprintf(t->backend, sizeof(t->backend), "host");
		return;
	}
	for (size_t i = 0; i < RT_ARRAY_SIZE(gpus); i++) {
		const struct dev_ops *ops = dev_backend_find(gpus[i], NULL);
		int n = 0;
		struct rt_sb e = RT_SB_INIT;
		if (ops && !ops->count(&n, &e) && n > 0) {
			snprintf(t->backend, sizeof(t->backend), "%s", gpus[i]);
			rt_sb_release(&e);
			return;
		}
		rt_sb_addf(why, "%s%s", why->len ? "; " : "", e.len ? e.buf : gpus[i]);
		rt_sb_release(&e);
	}
}

/* The spec's device, else the first kernel benchmark's, else tel_auto. */
static void tel_resolve(struct camp *c, int64_t iter)
{
	struct camp_tel_dev *t = &c->tel;
	const struct spec_telemetry *st = &c->s->telemetry;
	struct rt_sb why = RT_SB_INIT;
	t->resolved = true;
	t->index = 0;
	if (!st->backend && c->s->exec.kind == SPEC_EXEC_SLURM) {
		rt_sb_adds(&why, "executor slurm: the measured device is on an allocated node");
	} else if (st->backend) {
		if (strcmp(st->backend, "none"))
			snprintf(t->backend, sizeof(t->backend), "%s", st->backend), t->index = st->index;
		else
			rt_sb_adds(&why, "telemetry.device is none");
	} else {
		for (size_t b = 0; b < c->s->n_benches && !t->backend[0]; b++)
			if (c->s->benches[b].kind == SPEC_BENCH_KERNEL) {
				const struct spec_kernel *k = &c->s->benches[b].kernel;
				snprintf(t->backend, sizeof(t->backend), "%s", k->backend ? k->backend : "host");
				t->index = k->device;
			}
		if (!t->backend[0])
			tel_auto(t, &why);
	}
	char *v = t->backend[0] ? xasprintf("%s:%d", t->backend, t->index)
				: xasprintf("none: host readings only (%s)", why.buf);
	/* A GPU's index is that of this process's view (a pool worker sees
	 * its one GPU as 0): its UUID and bus id say which GPU it is; the
	 * management library is asked for that one (runner/device/dev.h). */
	const struct dev_ops *ops = t->backend[0] && strcmp(t->backend, "host") ? dev_backend_find(t->backend, NULL) : NULL;
	struct dev_info o;
	struct rt_sb ignore = RT_SB_INIT;
	if (ops && ops->info && !ops->info(t->index, &o, &ignore) && (o.uuid[0] || o.pci_id[0])) {
		char *w = xasprintf("%s (%s%s%s%s)", v, o.uuid, o.uuid[0] && o.pci_id[0] ? ", " : "",
				    o.pci_id[0] ? "PCI " : "", o.pci_id);
		free(v);
		v = w;
	}
	rt_sb_release(&ignore);
	tel_fact(c, iter, "telemetry.device", v);
	free(v);
	rt_sb_release(&why);
}

void camp_tel_start(struct camp *c, int64_t iter, struct camp_launch *l, struct dev_sampler **out)
{
	*out = NULL;
	if (!c->s->telemetry.enabled)
		return;
	if (!c->tel.resolved)
		tel_resolve(c, iter);
	pid_t *pids = NULL; /* under Slurm the engine runs elsewhere: no RSS */
	size_t n = l->eng && c->s->exec.kind != SPEC_EXEC_SLURM ? run_engine_pids(l->eng, &pids) : 0;
	struct dev_sampler_cfg cfg = {
		.backend = c->tel.backend[0] ? c->tel.backend : NULL, .index = c->tel.index,
		.period_ns = (int64_t)(c->s->telemetry.period_s * 1e9), .pids = pids, .npids = n,
	};
	struct rt_sb err = RT_SB_INIT;
	if (dev_sampler_start(&cfg, out, &err))
		camp_warn(c, "telemetry", &err);
	rt_sb_release(&err);
	free(pids);
}

/* The device stopped answering (or never did): said once, as a fact. */
static void tel_why(struct camp *c, int64_t iter, const struct dev_tel_summary *sum)
{
	if (!sum->why[0] || !c->tel.backend[0])
		return;
	char *v = xasprintf("%s:%d: no readings: %s", c->tel.backend, c->tel.index, sum->why);
	tel_fact(c, iter, "telemetry.device", v);
	free(v);
	c->tel.backend[0] = 0; /* host readings only from now on */
}

/* Each kernel benchmark's percent of peak at the SM clock it held: the
 * peak scales with the clock, so held / nominal of it was available. */
static void held_peak(const struct dev_tel_summary *sum, struct run_bench_out *outs, size_t nouts)
{
	if (!(sum->sm_clock_mhz > 0) || !(sum->max_clock_mhz > 0))
		return;
	for (size_t b = 0; b < nouts; b++)
		for (size_t k = 0; k < outs[b].n; k++)
			if (!strcmp(outs[b].m[k].name, "pct_peak_flops")) {
				double v = outs[b].m[k].value * sum->max_clock_mhz / sum->sm_clock_mhz;
				run_bench_out_add(&outs[b], "pct_peak_flops_held", v, "%");
				break;
			}
}

void camp_tel_finish(struct camp *c, int64_t iter, int arm, int rep, struct dev_sampler *s,
		     struct run_bench_out *tel, struct run_bench_out *outs, size_t nouts)
{
	if (!s)
		return;
	struct dev_tel_summary sum;
	dev_sampler_stop(s, &sum);
	dev_sampler_free(s);
	tel_why(c, iter, &sum);
	const double v[SPEC_TM_N] = {
		[SPEC_TM_SM_CLOCK] = sum.sm_clock_mhz, [SPEC_TM_MEM_CLOCK] = sum.mem_clock_mhz,
		[SPEC_TM_POWER] = sum.power_w, [SPEC_TM_TEMP] = sum.temp_c,
		[SPEC_TM_MEM_USED] = sum.mem_used_bytes, [SPEC_TM_CPU] = sum.cpu_mhz,
		[SPEC_TM_RSS] = sum.rss_bytes,
		[SPEC_TM_THROTTLED_FRAC] = sum.throttle_known ? sum.throttled_frac : NAN,
		[SPEC_TM_THROTTLED] = sum.throttle_known ? (double)sum.throttled : NAN,
		[SPEC_TM_THROTTLE_MASK] = sum.throttle_known ? (double)sum.throttle : NAN,
	};
	for (int i = 0; i < SPEC_TM_N; i++)
		if (isfinite(v[i]))
			run_bench_out_add(tel, spec_telemetry_metric_name(i), v[i],
					  spec_telemetry_metric_unit(i));
	held_peak(&sum, outs, nouts);
	if (!sum.throttled)
		return;
	char names[128];
	dev_throttle_names(sum.throttle & DEV_THR_MARKS, names, sizeof(names));
	char *f = xasprintf("%s sample %d: %s (%.0f%% of %zu readings)", arm_names[arm], rep + 1, names,
			    100.0 * sum.throttled_frac, sum.ticks);
	tel_fact(c, iter, "telemetry.throttled", f);
	free(f);
}
