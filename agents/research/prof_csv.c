/*
 * The line-oriented profiles, read one line at a time (constant memory):
 *
 * - rocprofv3 kernel traces (`rocprofv3 --kernel-trace --output-format csv
 *   -- app`, file <pid>_kernel_trace.csv), after ROCprofiler-SDK's
 *   "Kernel naming and filtering using rocprofv3" (ROCm 6.2 to 7.0): a header
 *   "Kind","Agent_Id",...,"Kernel_Name",...,"Start_Timestamp",
 *   "End_Timestamp",... with one KERNEL_DISPATCH row per launch, times in ns.
 *   Columns are found by name, so added columns do not matter.
 * - unitrace (intel/pti-gpu tools/unitrace, and its ze_tracer predecessor)
 *   `--device-timing` reports for Level Zero: after "== L0 Backend ==" a
 *   header "Kernel, Calls, Time (ns), Time (%), Average (ns), Min (ns), Max (ns)"
 *   and one row per kernel (quoted name, summed over its calls). With -v the
 *   name carries the launch shape "[SIMD16 {20;1;1} {64;8;1}]".
 * - Nsight Compute CSV, as ncu 2025.3 writes it (`ncu --csv ... app` on
 *   stdout, or `ncu --import R.ncu-rep --csv --page details`): a header
 *   "ID","Process ID",...,"Kernel Name",...,"Metric Name","Metric Unit",
 *   "Metric Value" and one row per kernel and metric, the rows of one kernel
 *   together; ncu's own "==PROF==" lines may come first. A kernel's time is
 *   its gpu__time_duration.sum, else the Speed Of Light section's Duration;
 *   units ns, us, ms, s (or nsecond, usecond, msecond, second); numbers carry
 *   ',' between thousands ("176,448"). `--page raw` (one row per kernel, a
 *   column per metric, the units in a row under the header) is read too.
 */
#include "agents/research/profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "variants/var.h"

/* One line's fields, trimmed and unquoted (owned by the struct var_csv). */
static int split_line(const char *path, int lineno, const char *line, size_t len, struct var_csv *c,
		      struct rt_sb *err)
{
	while (len && (*line == ' ' || *line == '\t'))
		line++, len--;
	while (len && strchr("\r\n", line[len - 1]))
		len--;
	struct rt_sb e = RT_SB_INIT;
	int rc = var_csv_parse(path, line, len, c, &e);
	if (rc)
		rt_errf(err, rc, "%s:%d: %s", path, lineno, e.buf);
	rt_sb_release(&e);
	if (rc || !c->n)
		return rc;
	for (size_t i = 0; i < c->rows[0].n; i++) {
		char *v = c->rows[0].f[i].value, *a = v;
		while (*a == ' ')
			a++;
		size_t n = strlen(a);
		while (n && a[n - 1] == ' ')
			n--;
		if (n >= 2 && a[0] == '"' && a[n - 1] == '"')
			a++, n -= 2;
		memmove(v, a, n);
		v[n] = 0;
	}
	return 0;
}

static int column(const struct var_csv *c, const char *name)
{
	for (size_t i = 0; c->n && i < c->rows[0].n; i++)
		if (!strcmp(c->rows[0].f[i].value, name))
			return (int)i;
	return -1;
}

static const char *cell(const struct var_csv *c, int i)
{
	return i >= 0 && (size_t)i < c->rows[0].n ? c->rows[0].f[i].value : "";
}

static int number(const char *path, int lineno, const char *col, const char *s, double *out,
		  struct rt_sb *err)
{
	char *end;
	*out = strtod(s, &end);
	if (!*s || *end)
		return rt_errf(err, RT_EPARSE, "%s:%d: column '%s': '%s' is not a number", path, lineno,
			       col, s);
	return 0;
}

/* research_profile_add, its refusal placed at path:lineno. */
static int add(const char *path, int lineno, struct research_profile *p, const char *name, double us,
	       double calls, struct rt_sb *err)
{
	struct rt_sb why = RT_SB_INIT;
	int rc = research_profile_add(p, name, NULL, us, calls, &why);
	if (rc)
		rt_errf(err, rc, "%s:%d: %s", path, lineno, why.buf);
	rt_sb_release(&why);
	return rc;
}

/* A line reader over a file. */
struct lines {
	FILE *f;      /* the file */
	char *buf;    /* getline's buffer */
	size_t cap;   /* its size */
	ssize_t len;  /* the current line's length, -1 at the end */
	int no;       /* its number */
};

static bool next_line(struct lines *l)
{
	l->len = getline(&l->buf, &l->cap, l->f);
	l->no++;
	return l->len >= 0;
}

static int open_lines(const char *path, struct lines *l, struct rt_sb *err)
{
	memset(l, 0, sizeof(*l));
	l->f = fopen(path, "rb");
	return l->f ? 0 : rt_errf(err, RT_EIO, "%s: %s", path, strerror(errno));
}

static void close_lines(struct lines *l)
{
	fclose(l->f);
	free(l->buf);
}

int research_read_rocprof(const char *path, struct research_profile *p, struct rt_sb *err)
{
	struct lines l;
	int rc = open_lines(path, &l, err);
	if (rc)
		return rc;
	int name = -1, start = -1, end = -1;
	struct var_csv c = { 0 };
	if (!next_line(&l) || (rc = split_line(path, 1, l.buf, (size_t)l.len, &c, err)) ||
	    (name = column(&c, "Kernel_Name")) < 0 || (start = column(&c, "Start_Timestamp")) < 0 ||
	    (end = column(&c, "End_Timestamp")) < 0)
		rc = rc ? rc : rt_errf(err, RT_EPARSE, "%s:1: not a rocprofv3 kernel trace (no Kernel_Name, "
				       "Start_Timestamp and End_Timestamp columns)", path);
	var_csv_release(&c);
	while (!rc && next_line(&l)) {
		if ((rc = split_line(path, l.no, l.buf, (size_t)l.len, &c, err)) || !c.n ||
		    (c.rows[0].n == 1 && !*cell(&c, 0))) {
			var_csv_release(&c);
			continue;
		}
		double t0, t1;
		if (!(rc = number(path, l.no, "Start_Timestamp", cell(&c, start), &t0, err)) &&
		    !(rc = number(path, l.no, "End_Timestamp", cell(&c, end), &t1, err)))
			rc = add(path, l.no, p, cell(&c, name), (t1 - t0) / 1e3, 1, err);
		var_csv_release(&c);
	}
	close_lines(&l);
	return rc;
}

bool research_sniff_rocprof(const char *head, size_t n, const char *path)
{
	(void)n;
	(void)path;
	return strstr(head, "Kernel_Name") && strstr(head, "Start_Timestamp");
}

/* Is this unitrace's device-timing header? */
static bool timing_header(const struct var_csv *c)
{
	return column(c, "Kernel") == 0 && column(c, "Calls") >= 0 && column(c, "Time (ns)") >= 0;
}

int research_read_unitrace(const char *path, struct research_profile *p, struct rt_sb *err)
{
	struct lines l;
	int rc = open_lines(path, &l, err);
	if (rc)
		return rc;
	int calls = -1, time = -1;
	bool in_table = false, seen = false;
	struct var_csv c = { 0 };
	while (!rc && next_line(&l)) {
		const char *s = l.buf + strspn(l.buf, " \t");
		if (!*s || *s == '\n' || *s == '\r' || *s == '=') {
			in_table = false; /* a blank line or a section ends a table */
			continue;
		}
		if ((rc = split_line(path, l.no, l.buf, (size_t)l.len, &c, err)))
			break;
		if (timing_header(&c)) {
			calls = column(&c, "Calls");
			time = column(&c, "Time (ns)");
			in_table = seen = true;
		} else if (in_table) {
			double n, t;
			if (!(rc = number(path, l.no, "Calls", cell(&c, calls), &n, err)) &&
			    !(rc = number(path, l.no, "Time (ns)", cell(&c, time), &t, err)))
				rc = add(path, l.no, p, cell(&c, 0), t / 1e3, n, err);
		}
		var_csv_release(&c);
	}
	var_csv_release(&c);
	close_lines(&l);
	if (!rc && !seen)
		rc = rt_errf(err, RT_EPARSE, "%s: no device timing table (a header \"Kernel, Calls, Time "
				     "(ns), ...\"; run unitrace with --device-timing)", path);
	return rc;
}

bool research_sniff_unitrace(const char *head, size_t n, const char *path)
{
	(void)n;
	(void)path;
	return strstr(head, "Kernel,") && strstr(head, "Calls,") && strstr(head, "Time (ns)");
}

/* ---- Nsight Compute ---- */

/* Microseconds in one unit of u; 0 when u is no time unit. */
static double ncu_unit(const char *u)
{
	static const struct {
		const char *name;
		double us;
	} units[] = { { "ns", 1e-3 }, { "nsecond", 1e-3 }, { "us", 1 }, { "usecond", 1 },
		      { "ms", 1e3 },   { "msecond", 1e3 },  { "s", 1e6 }, { "second", 1e6 } };
	for (size_t i = 0; i < RT_ARRAY_SIZE(units); i++)
		if (!strcmp(u, units[i].name))
			return units[i].us;
	return 0;
}

/* A duration cell in unit into microseconds ("176,448" ns: 176.448). */
static int ncu_time(const char *path, int lineno, const char *col, const char *v, const char *unit,
		    double *us, struct rt_sb *err)
{
	double scale = ncu_unit(unit);
	if (!scale)
		return rt_errf(err, RT_EPARSE, "%s:%d: column '%s': unit '%s' is not a time", path, lineno,
			       col, unit);
	char digits[64];
	size_t n = 0;
	for (const char *c = v; *c && n + 1 < sizeof(digits); c++)
		if (*c != ',')
			digits[n++] = *c;
	digits[n] = 0;
	int rc = number(path, lineno, col, digits, us, err);
	*us *= scale;
	return rc;
}

/* Where the columns are, and the kernel being read (details form). */
struct ncu_cols {
	int id, name, metric, unit, value; /* details: a row per metric */
	int dur;                           /* raw: the gpu__time_duration.sum column */
	char dur_unit[16];                 /* raw: its unit, from the units row */
	char *cur_id, *cur_name;           /* details: the kernel whose rows are being read */
	double cur_us;                     /* its time so far */
	int cur_rank;                      /* 2: gpu__time_duration.sum, 1: Duration, 0: none */
	int cur_line;                      /* its first row */
};

static int ncu_flush(const char *path, struct ncu_cols *k, struct research_profile *p, struct rt_sb *err)
{
	int rc = 0;
	if (k->cur_id && !k->cur_rank)
		rc = rt_errf(err, RT_EPARSE, "%s:%d: kernel ID %s has no gpu__time_duration.sum or Duration "
			     "metric (profile with --metrics gpu__time_duration.sum or --section "
			     "SpeedOfLight)", path, k->cur_line, k->cur_id);
	else if (k->cur_id)
		rc = add(path, k->cur_line, p, k->cur_name, k->cur_us, 1, err);
	free(k->cur_id);
	free(k->cur_name);
	k->cur_id = k->cur_name = NULL;
	k->cur_rank = 0;
	return rc;
}

/* One row of the details form. */
static int ncu_detail_row(const char *path, int lineno, const struct var_csv *c, struct ncu_cols *k,
			  struct research_profile *p, struct rt_sb *err)
{
	int rc = 0;
	if (!k->cur_id || strcmp(k->cur_id, cell(c, k->id))) {
		if ((rc = ncu_flush(path, k, p, err)))
			return rc;
		k->cur_id = xstrdup(cell(c, k->id));
		k->cur_name = xstrdup(cell(c, k->name));
		k->cur_line = lineno;
	}
	const char *m = cell(c, k->metric);
	int rank = !strcmp(m, "gpu__time_duration.sum") ? 2 : !strcmp(m, "Duration") ? 1 : 0;
	if (rank > k->cur_rank) {
		rc = ncu_time(path, lineno, m, cell(c, k->value), cell(c, k->unit), &k->cur_us, err);
		k->cur_rank = rank;
	}
	return rc;
}

/* The header's columns; false when this line is no ncu header. */
static bool ncu_header(const struct var_csv *c, struct ncu_cols *k)
{
	k->id = column(c, "ID");
	k->name = column(c, "Kernel Name");
	k->metric = column(c, "Metric Name");
	k->unit = column(c, "Metric Unit");
	k->value = column(c, "Metric Value");
	k->dur = column(c, "gpu__time_duration.sum");
	return k->id >= 0 && k->name >= 0 &&
	       ((k->metric >= 0 && k->unit >= 0 && k->value >= 0) || k->dur >= 0);
}

int research_read_ncu(const char *path, struct research_profile *p, struct rt_sb *err)
{
	struct lines l;
	int rc = open_lines(path, &l, err);
	if (rc)
		return rc;
	struct ncu_cols k = { .dur = -1 };
	bool header = false, details = false;
	struct var_csv c = { 0 };
	while (!rc && next_line(&l)) {
		const char *s = l.buf + strspn(l.buf, " \t");
		if (!*s || *s == '\n' || *s == '\r' || !strncmp(s, "==", 2))
			continue; /* ncu's own ==PROF== and ==WARNING== lines */
		if ((rc = split_line(path, l.no, l.buf, (size_t)l.len, &c, err)))
			break;
		if (!header) {
			header = ncu_header(&c, &k);
			details = header && k.metric >= 0;
		} else if (details) {
			rc = ncu_detail_row(path, l.no, &c, &k, p, err);
		} else if (!*cell(&c, k.id) && !*cell(&c, k.name)) {
			snprintf(k.dur_unit, sizeof(k.dur_unit), "%s", cell(&c, k.dur)); /* the units row */
		} else {
			double us;
			if (!(rc = ncu_time(path, l.no, "gpu__time_duration.sum", cell(&c, k.dur), k.dur_unit,
					    &us, err)))
				rc = add(path, l.no, p, cell(&c, k.name), us, 1, err);
		}
		var_csv_release(&c);
	}
	var_csv_release(&c);
	if (!rc && details)
		rc = ncu_flush(path, &k, p, err);
	free(k.cur_id);
	free(k.cur_name);
	close_lines(&l);
	if (!rc && !header)
		rc = rt_errf(err, RT_EPARSE, "%s: no Nsight Compute CSV header (\"ID\", ..., \"Kernel Name\", "
				     "..., \"Metric Name\", \"Metric Unit\", \"Metric Value\"; export with "
				     "ncu --csv)", path);
	return rc;
}

bool research_sniff_ncu(const char *head, size_t n, const char *path)
{
	(void)n;
	(void)path;
	return strstr(head, "\"Kernel Name\"") &&
	       (strstr(head, "\"Metric Name\"") || strstr(head, "\"gpu__time_duration.sum\""));
}
