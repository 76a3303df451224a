/*
 * `ratchet show`'s engine launches (db/launches.h): each engine an iteration
 * started, with its provenance. Launches whose provenance reads the same
 * are one block ("8 identical launches (4 best, 4 cand)"), since an
 * iteration under engine.restart: sample starts one per sample; the text
 * summary names the version and any difference from the campaign's first
 * launch, the full view each launch and all of its provenance. JSON lists
 * every launch.
 */
#include "reports/rep_int.h"
#include "db/launches.h"

#include <string.h>

/* Every launch with its provenance, as a new array. */
json_t *rep_launches_json(const struct db_launch *v, size_t n)
{
	json_t *la = json_array();
	for (size_t i = 0; i < n; i++) {
		const struct db_launch *l = &v[i];
		json_array_append_new(la, json_pack("{s:s?,s:I,s:o,s:s?,s:s?,s:s?,s:s?,s:s?,s:s?,s:s?,s:s?,s:s?,s:s?}",
						    "arm", l->arm, "port", (json_int_t)l->port, "ready_s",
						    isnan(l->ready_s) ? json_null() : json_real(l->ready_s),
						    "version", l->version, "exe", l->exe_path, "exe_sha256",
						    l->exe_sha256, "image", l->image_ref, "image_digest",
						    l->image_digest, "repos", l->repos, "provenance", l->extra, "note", l->note,
						    "differs", l->differs, "libs", l->libs));
	}
	return la;
}

/* One provenance line, when there is something to say. */
static void prov_line(struct rt_sb *sb, const char *what, const char *v)
{
	if (!v)
		return;
	rt_sb_addf(sb, "    %-13s", what);
	rep_term_escape(sb, v);
	rt_sb_adds(sb, "\n");
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Two launches whose provenance reads the same: one block says it for both. */
static bool same_launch(const struct db_launch *a, const struct db_launch *b)
{
	return same_str(a->differs, b->differs) && same_str(a->version, b->version) &&
	       same_str(a->exe_path, b->exe_path) && same_str(a->exe_sha256, b->exe_sha256) &&
	       same_str(a->image_ref, b->image_ref) && same_str(a->image_digest, b->image_digest) &&
	       same_str(a->repos, b->repos) && same_str(a->libs, b->libs) &&
	       same_str(a->note, b->note) && same_str(a->extra, b->extra);
}

static void launch_line(struct rt_sb *sb, const struct db_launch *l, const char *indent)
{
	rt_sb_addf(sb, "%s%s, port %d", indent, l->arm, l->port);
	if (!isnan(l->ready_s))
		rt_sb_addf(sb, ", ready in %.2fs", l->ready_s);
	rt_sb_adds(sb, "\n");
}

/* Launches at or after from that are like v[first], with arm (any arm when
 * NULL). */
static size_t group_count(const struct db_launch *v, size_t n, size_t first, size_t from, const char *arm)
{
	size_t k = 0;
	for (size_t j = from; j < n; j++)
		k += same_launch(&v[first], &v[j]) && (!arm || !strcmp(arm, v[j].arm));
	return k;
}

/* The first line of a group of identical launches: how many, of which arms,
 * how fast they were ready. */
static void group_line(const struct db_launch *v, size_t n, size_t first, struct rt_sb *sb)
{
	double lo = NAN, hi = NAN;
	rt_sb_addf(sb, "  %zu identical launches (", group_count(v, n, first, first, NULL));
	for (size_t j = first, k = 0; j < n; j++) {
		const struct db_launch *m = &v[j];
		if (!same_launch(&v[first], m))
			continue;
		if (!isnan(m->ready_s)) {
			lo = isnan(lo) || m->ready_s < lo ? m->ready_s : lo;
			hi = isnan(hi) || m->ready_s > hi ? m->ready_s : hi;
		}
		size_t of_arm = group_count(v, n, first, j, m->arm);
		if (of_arm == group_count(v, n, first, first, m->arm)) /* the arm's first */
			rt_sb_addf(sb, "%s%zu %s", k++ ? ", " : "", of_arm, m->arm);
	}
	rt_sb_adds(sb, ")");
	if (!isnan(lo))
		rt_sb_addf(sb, ", ready in %.2f-%.2fs", lo, hi);
	rt_sb_adds(sb, "\n");
}

/* The engines the iteration started. Launches whose provenance is the same
 * are one block ("8 identical launches"); the summary names the version and
 * any difference from the campaign's first launch, the full view every
 * launch and all of its provenance. */
void rep_launches_text(const struct db_launch *v, size_t n, struct rt_sb *sb, bool color, bool full)
{
	for (size_t i = 0; i < n; i++) {
		const struct db_launch *l = &v[i];
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = same_launch(l, &v[j]);
		if (seen)
			continue;
		size_t same = group_count(v, n, i, i, NULL);
		if (same == 1)
			launch_line(sb, l, "  ");
		else
			group_line(v, n, i, sb);
		for (size_t j = i; full && same > 1 && j < n; j++)
			if (same_launch(l, &v[j]))
				launch_line(sb, &v[j], "    ");
		if (l->differs) {
			rt_sb_addf(sb, "    %sDIFFERS from the campaign's first launch:%s ", rep_ansi(color, "red"),
				   rep_ansi(color, "reset"));
			rep_term_escape(sb, l->differs);
			rt_sb_adds(sb, "\n");
		}
		prov_line(sb, "version", l->version ? l->version : "(the engine did not say)");
		if (!full)
			continue;
		prov_line(sb, "executable", l->exe_path);
		prov_line(sb, "sha256", l->exe_sha256);
		prov_line(sb, "image", l->image_ref);
		prov_line(sb, "image digest", l->image_digest);
		prov_line(sb, "repositories", l->repos);
		prov_line(sb, "libraries", l->libs);
		prov_line(sb, "not recorded", l->note);
		if (l->extra)
			rt_sb_addf(sb, "    %-13s%zu bytes (show --json)\n", "provenance", strlen(l->extra));
	}
}

