/*
 * Small formatting helpers shared by every report: state glyphs, changes of
 * a metric in one sign convention (the metric's own change, its interval
 * and its direction in words), which metrics are the client's own, compact
 * numbers, sample summaries, and escaping of database text for terminals,
 * Markdown and HTML.
 */
#include "reports/rep.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *rep_campaign_state(const struct db_campaign *c)
{
	if (c->state && !strcmp(c->state, "running") && !c->held)
		return "stopped (resumable)";
	return c->state ? c->state : "unknown";
}

const char *rep_glyph(enum db_iter_state state, bool invalidated)
{
	if (invalidated)
		return "⊘";
	switch (state) {
	case DB_ITER_BASELINE: return "●";
	case DB_ITER_KEPT: return "✓";
	case DB_ITER_REVERTED: return "↩";
	case DB_ITER_GATED: return "✗";
	case DB_ITER_FAILED: return "!";
	case DB_ITER_INVALID: return "⊘";
	case DB_ITER_INTERRUPTED: return "⚡";
	default: return "…";
	}
}

void rep_fmt_change(struct rt_sb *sb, double change, double lo, double hi, int better)
{
	if (isnan(change)) {
		rt_sb_adds(sb, "—");
		return;
	}
	rt_sb_addf(sb, "%+.1f%%", change * 100 + 0.0);
	if (!isnan(lo) && !isnan(hi))
		rt_sb_addf(sb, " [%+.1f, %+.1f]", lo * 100 + 0.0, hi * 100 + 0.0);
	if (better && fabs(change) >= 0.0005)
		rt_sb_adds(sb, (change > 0) == (better > 0) ? " (better)" : " (worse)");
}

int rep_obj_better(const struct db_iteration *it)
{
	double c = it->obj_cand / it->obj_best - 1, g = it->obj_delta;
	if (!isfinite(c) || !isfinite(g) || fabs(c) < 1e-12 || fabs(g) < 1e-12)
		return 0;
	return (c > 0) == (g > 0) ? 1 : -1;
}

bool rep_obj_change(const struct db_iteration *it, double *change, double *lo, double *hi,
		    int *better)
{
	*better = rep_obj_better(it);
	double g = it->obj_delta, glo = it->obj_ci_lo, ghi = it->obj_ci_hi;
	if (isnan(g)) {
		*change = *lo = *hi = NAN;
		return false;
	}
	/* higher is better: the gain is the change; lower: its negative */
	bool neg = *better < 0;
	*change = neg ? -g : g;
	*lo = neg ? -ghi : glo;
	*hi = neg ? -glo : ghi;
	return true;
}

double rep_kept_compound(const struct db_iteration *it, size_t n, int *better)
{
	double r = 1;
	*better = 0;
	for (size_t i = 0; i < n; i++) {
		double c, lo, hi;
		int b;
		if (it[i].state != DB_ITER_KEPT || it[i].invalidated ||
		    !rep_obj_change(&it[i], &c, &lo, &hi, &b))
			continue;
		r *= 1 + c;
		if (b)
			*better = b;
	}
	return r - 1;
}

void rep_regr_change(const struct db_q_regr *r, double *change, double *lo, double *hi, int *better)
{
	double c = r->after / r->before - 1;
	/* stored: delta < 0 is worse, so a metric that went up got worse when lower is better */
	*better = !isfinite(c) || c == 0 ? 0 : (c > 0) == (r->delta > 0) ? 1 : -1;
	bool neg = *better < 0;
	*change = isfinite(c) ? c : neg ? -r->delta : r->delta;
	*lo = neg ? -r->ci_hi : r->ci_lo;
	*hi = neg ? -r->ci_lo : r->ci_hi;
}

bool rep_self_metric(const char *metric)
{
	static const char *const exact[] = { "rsd", "samples" };
	if (!metric)
		return false;
	if (!strncmp(metric, "send_lag", 8))
		return true;
	for (size_t i = 0; i < RT_ARRAY_SIZE(exact); i++)
		if (!strcmp(metric, exact[i]))
			return true;
	return false;
}

void rep_fmt_num(struct rt_sb *sb, double v)
{
	if (isnan(v)) {
		rt_sb_adds(sb, "—");
		return;
	}
	char buf[64];
	double a = fabs(v);
	if (a >= 1e6 || (a > 0 && a < 1e-3))
		snprintf(buf, sizeof(buf), "%.3g", v);
	else if (a >= 1000)
		snprintf(buf, sizeof(buf), "%.1f", v);
	else
		snprintf(buf, sizeof(buf), "%.4g", v);
	/* %.1f may leave "1147.0": drop a trailing ".0". */
	size_t n = strlen(buf);
	if (!strchr(buf, 'e') && strchr(buf, '.')) {
		while (n && buf[n - 1] == '0')
			buf[--n] = 0;
		if (n && buf[n - 1] == '.')
			buf[--n] = 0;
	}
	if (!strcmp(buf, "-0"))
		strcpy(buf, "0");
	rt_sb_adds(sb, buf);
}

void rep_html_escape(struct rt_sb *sb, const char *s)
{
	rt_sb_add_markup(sb, s);
}

void rep_md_escape(struct rt_sb *sb, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '\n' || *s == '\r' || *s == '\t')
			rt_sb_addc(sb, ' ');
		else if ((unsigned char)*s < 0x20 || *s == 0x7f)
			rt_sb_addc(sb, '?'); /* a model's or an engine's ESC never reaches a reader's terminal */
		else if (rt_utf8_c1(s))
			rt_sb_addc(sb, '?'), s++; /* nor its one-character CSI (U+009B) */
		else if (strchr("\\`*_[]<|~&", *s))
			rt_sb_addc(sb, '\\'), rt_sb_addc(sb, *s);
		else
			rt_sb_addc(sb, *s);
	}
}

void rep_term_escape(struct rt_sb *sb, const char *s)
{
	for (; s && *s; s++) {
		bool c1 = rt_utf8_c1(s); /* U+0080..U+009F: U+009B is a one-character CSI */
		rt_sb_addc(sb, ((unsigned char)*s < 0x20 && *s != '\n') || *s == 0x7f || c1 ? '?' : *s);
		s += c1;
	}
}

static double median_of(const double *v, size_t n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void rep_summarise(const double *sorted, size_t n, struct rep_summary *out)
{
	out->n = n;
	if (!n) {
		out->median = out->mad = out->min = out->max = NAN;
		return;
	}
	out->median = median_of(sorted, n);
	out->min = sorted[0];
	out->max = sorted[n - 1];
	double *dev = xmalloc(n * sizeof(*dev));
	for (size_t i = 0; i < n; i++)
		dev[i] = fabs(sorted[i] - out->median);
	qsort(dev, n, sizeof(*dev), rt_cmp_double);
	out->mad = median_of(dev, n);
	free(dev);
}

int rep_parse_since(const char *s, int64_t now_ms, int64_t *out, struct rt_sb *err)
{
	char *end;
	long long n = strtoll(s, &end, 10);
	if (end != s && n >= 0 && end[0] && !end[1] && strchr("mhd", end[0])) {
		int64_t unit = end[0] == 'm' ? 60000 : end[0] == 'h' ? 3600000 : 86400000;
		*out = now_ms - (int64_t)n * unit;
		return 0;
	}
	struct tm tm = { 0 };
	int y, mo, d, h = 0, mi = 0, used = 0;
	if ((sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &used) == 3 && !s[used]) ||
	    (sscanf(s, "%4d-%2d-%2d%*[T ]%2d:%2d%n", &y, &mo, &d, &h, &mi, &used) == 5 &&
	     !s[used])) {
		if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59)
			goto bad;
		tm.tm_year = y - 1900;
		tm.tm_mon = mo - 1;
		tm.tm_mday = d;
		tm.tm_hour = h;
		tm.tm_min = mi;
		*out = (int64_t)timegm(&tm) * 1000;
		return 0;
	}
bad:
	return rt_errf(err, RT_EUSAGE,
		       "--since: '%s' is not a date (2025-11-30, 2025-11-30T14:00) or an age (12h, 3d)",
		       s);
}
