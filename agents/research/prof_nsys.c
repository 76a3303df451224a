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

#include <string.h>

#include "db/profiles.h"

static void kernel_row(void *arg, const char *const *text, const int64_t *ints)
{
	research_profile_add(arg, text[0] ? text[0] : "?", NULL, (double)ints[1] / 1e3, 1);
}

static void range_row(void *arg, const char *const *text, const int64_t *ints)
{
	struct research_profile *p = arg;
	if (text[0] && research_profile_is_step(p, text[0]))
		research_profile_step(p, (double)ints[1] / 1e3, -1, -1);
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
	int rc = db_foreign_each(path, kernels, RT_ARRAY_SIZE(kernels), 2, kernel_row, p,
				 "no CUPTI_ACTIVITY_KIND_KERNEL with StringIds (not an nsys export, or "
				 "no CUDA kernel traced)", err);
	if (!rc) {
		rc = db_foreign_each(path, ranges, RT_ARRAY_SIZE(ranges), 2, range_row, p, NULL, err);
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
