/*
 * Nsight Systems SQLite exports (`nsys export --type sqlite report.nsys-rep`,
 * or `nsys profile --export sqlite`), read after the "SQLite Export Schema
 * Reference" of Nsight Systems 2021.5 to 2024.x: kernels are rows of
 * CUPTI_ACTIVITY_KIND_KERNEL (start, end in ns; demangledName and shortName
 * are ids into StringIds(id, value)). Steps are NVTX ranges (NVTX_EVENTS,
 * eventType 59 push/pop or 60 start/end; the name in text, or in textId into
 * StringIds on newer versions). Rows are stepped one at a time, so memory is
 * the per-kernel sums only.
 */
#include "agents/research/profile.h"

#include <stdlib.h>
#include <string.h>

#include "db/profiles.h"

/* How long one query of an export may run: a real export of hours of
 * tracing reads in seconds to minutes; a recursive view never ends. */
#define NSYS_TIME_LIMIT_MS (10 * 60 * 1000)

/* A row's refusal names the file; db_foreign_each says which row. */
static int kernel_row(void *arg, const char *const *text, const int64_t *ints, struct rt_sb *why)
{
	return research_profile_add(arg, text[0] ? text[0] : "?", NULL, (double)ints[1] / 1e3, 1, why);
}

static int range_row(void *arg, const char *const *text, const int64_t *ints, struct rt_sb *why)
{
	struct research_profile *p = arg;
	if (text[0] && research_profile_is_step(p, text[0]))
		return research_profile_step(p, (double)ints[1] / 1e3, -1, -1, why);
	return 0;
}

int research_read_nsys(const char *path, struct research_profile *p, struct rt_sb *err)
{
	static const char *const kernels[] = {
		"SELECT s.value, k.\"end\" - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL AS k "
		"JOIN StringIds AS s ON s.id = k.demangledName",
	};
	/* NVTX ranges that mark a step: textId (newer versions) or text. */
	static const char *const ranges[] = {
		"SELECT COALESCE(n.text, s.value), n.\"end\" - n.start FROM NVTX_EVENTS AS n "
		"LEFT JOIN StringIds AS s ON s.id = n.textId WHERE n.eventType IN (59, 60)",
		"SELECT n.text, n.\"end\" - n.start FROM NVTX_EVENTS AS n WHERE n.eventType IN (59, 60)",
	};
	/* A hostile export (a recursive view) must not hang the import. */
	const char *env = getenv("RATCHET_PROFILE_TIME_LIMIT_MS"); /* testing hook */
	int64_t limit = env && atoll(env) > 0 ? atoll(env) : NSYS_TIME_LIMIT_MS;
	int rc = db_foreign_each(path, kernels, RT_ARRAY_SIZE(kernels), 2, kernel_row, p,
				 "no CUPTI_ACTIVITY_KIND_KERNEL with StringIds (not an nsys export, or "
				 "no CUDA kernel traced)", limit, err);
	if (!rc) {
		rc = db_foreign_each(path, ranges, RT_ARRAY_SIZE(ranges), 2, range_row, p, NULL, limit, err);
		if (rc == RT_ENOENT) /* no NVTX in this report */
			rc = 0;
	}
	return rc;
}

bool research_sniff_nsys(const char *head, size_t n, const char *path)
{
	(void)path;
	return n >= 16 && !memcmp(head, "SQLite format 3", 16);
}
