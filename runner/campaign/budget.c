/*
 * The run's budget: --max-iterations, and a deadline (--until 07:00, --for
 * 8h) checked at each iteration boundary. The next iteration starts only
 * when it is expected to end before the deadline, and when the run stops
 * for the budget it says why (run_campaign_result.stopped).
 *
 * The expected length of the next iteration comes from this campaign's own
 * finished iterations (wall time from start to finish, baseline and
 * interrupted ones left out): with five or more, their 90th percentile
 * (type 7, runner/stats); with fewer, the longest. A median would overrun
 * the deadline about every second time; an overrun costs the morning's
 * engine time, a stop one iteration early costs one iteration, so a high
 * quantile is the right side to err on, and with few samples only the
 * maximum is a safe high quantile. Before any change finished, twice the
 * baseline's time stands in (an iteration measures two arms where the
 * baseline measures one); with no finished baseline either, nothing is
 * known and the iteration starts.
 */
#include "runner/campaign/campaign_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Fewer finished iterations than this: the longest, not the 90th percentile. */
#define BUDGET_MIN_FOR_QUANTILE 5

/* "07:00:00 (local)" of a Unix time. */
static void clock_text(double t, char *out, size_t n)
{
	time_t tt = (time_t)t;
	struct tm tm;
	localtime_r(&tt, &tm);
	strftime(out, n, "%Y-%m-%d %H:%M:%S", &tm);
}

static bool counts(const struct db_iteration *it)
{
	return strcmp(it->kind, "baseline") && it->finished_at > it->started_at &&
	       it->state != DB_ITER_INTERRUPTED && it->state >= DB_ITER_BASELINE;
}

int camp_budget_estimate(struct camp *c, double *next_s, struct rt_sb *how, struct rt_sb *err)
{
	struct db_iteration *its = NULL;
	size_t n = 0, k = 0;
	*next_s = NAN;
	int rc = db_iterations_list(c->db, c->cid, &its, &n, err);
	if (rc)
		return rc;
	double *w = xcalloc(n + 1, sizeof(double));
	double base = NAN;
	for (size_t i = 0; i < n; i++) {
		double s = (double)(its[i].finished_at - its[i].started_at) / 1000.0;
		if (counts(&its[i]))
			w[k++] = s;
		else if (its[i].state == DB_ITER_BASELINE && its[i].finished_at > its[i].started_at)
			base = s;
	}
	if (k >= BUDGET_MIN_FOR_QUANTILE) {
		*next_s = run_stats_quantile(w, k, 0.9);
		rt_sb_addf(how, "the 90th percentile of %zu finished iterations", k);
	} else if (k) {
		*next_s = w[0];
		for (size_t i = 1; i < k; i++)
			*next_s = fmax(*next_s, w[i]);
		rt_sb_addf(how, "the longest of %zu finished iteration%s", k, k == 1 ? "" : "s");
	} else if (!isnan(base)) {
		*next_s = 2 * base;
		rt_sb_adds(how, "twice the baseline's time, before any change finished");
	}
	free(w);
	db_iterations_free(its, n);
	return 0;
}

int camp_budget_allows(struct camp *c, int done, bool *allowed, char **why, struct rt_sb *err)
{
	const struct run_campaign_opts *o = c->o;
	*allowed = true;
	if (o->max_iterations && done >= o->max_iterations) {
		*allowed = false;
		*why = xasprintf("--max-iterations %d reached (this run's iterations, the baseline included)",
				 o->max_iterations);
		return 0;
	}
	/* One meaning for both caps: iterations, the baseline included. The
	 * flag counts this run's, the spec's the campaign's (over resumes). */
	if (c->s->max_iterations && c->seq >= c->s->max_iterations) {
		*allowed = false;
		*why = xasprintf("the spec's max_iterations %d reached (the campaign's iterations, the baseline "
				 "included)", c->s->max_iterations);
		return 0;
	}
	if (!(o->deadline > 0))
		return 0;
	double now = (double)rt_wall_ms() / 1000.0, next;
	struct rt_sb how = RT_SB_INIT;
	int rc = camp_budget_estimate(c, &next, &how, err);
	char dl[32], end[32], len[32];
	clock_text(o->deadline, dl, sizeof(dl));
	if (!rc && now >= o->deadline) {
		*allowed = false;
		*why = xasprintf("%s: the deadline %s has passed", o->deadline_text, dl);
	} else if (!rc && !isnan(next) && now + next > o->deadline) {
		*allowed = false;
		clock_text(now + next, end, sizeof(end));
		rt_fmt_duration(next, len, sizeof(len));
		*why = xasprintf("%s: the next iteration would take about %s (%s) and end at %s, after "
				 "the deadline %s", o->deadline_text, len, how.buf, end, dl);
	}
	rt_sb_release(&how);
	return rc;
}

int run_budget_until(const char *hhmm, double now, double *out)
{
	int h = -1, m = -1, sec = 0, used = 0;
	size_t n = strlen(hhmm);
	if (!(sscanf(hhmm, "%2d:%2d%n", &h, &m, &used) == 2 && (size_t)used == n) &&
	    !(sscanf(hhmm, "%2d:%2d:%2d%n", &h, &m, &sec, &used) == 3 && (size_t)used == n))
		return RT_EINVAL;
	if (h < 0 || h > 23 || m < 0 || m > 59 || sec < 0 || sec > 59)
		return RT_EINVAL;
	time_t t = (time_t)now;
	struct tm tm;
	localtime_r(&t, &tm);
	for (int day = 0; day < 2; day++) {
		struct tm at = tm;
		at.tm_mday += day;
		at.tm_hour = h;
		at.tm_min = m;
		at.tm_sec = sec;
		at.tm_isdst = -1; /* mktime finds out, across a daylight-saving change too */
		time_t when = mktime(&at);
		if ((double)when > now) {
			*out = (double)when;
			return 0;
		}
	}
	return RT_EINVAL;
}
