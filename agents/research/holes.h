/*
 * The research side: table-coverage holes. A tuned table keyed by shape
 * (AITER's JSON attention configs, a CSV of tuned GEMMs keyed on M,N,K) only
 * helps the shapes it has an entry for; any other shape silently falls back
 * to a default tile. Given the shapes a profile saw, with their weight (time
 * or count), this finds the observed shapes with no entry, ranks them by
 * the most they could gain (their share of the weight), and proposes for
 * each one change: the entry copied from the nearest existing shape.
 */
#ifndef RESEARCH_HOLES_H
#define RESEARCH_HOLES_H

#include <stdbool.h>
#include <stddef.h>

#include "runner/base/rt.h"

/* One observed shape the table has no entry for. */
struct research_hole {
	char *key;          /* the entry key it would need: a JSON key, or "v1,v2,v3" for CSV */
	double weight;      /* summed weight of the profile rows with this key */
	double share;       /* weight / total weight: the most filling it could gain */
	char *nearest;      /* key of the nearest existing entry, or NULL for an empty table */
	char *fields_json;  /* that entry's fields as a JSON object, or NULL */
};

struct research_holes {
	struct research_hole *v;  /* holes, largest share first */
	size_t n;
	size_t entries;        /* entries in the table */
	size_t observed;       /* distinct keys in the profile */
	size_t covered;        /* observed keys that have an entry */
	double covered_share;  /* share of the weight they carry */
	bool csv;              /* the table is CSV (keys are joined key columns) */
};

/*
 * Compare a table (JSON object keyed by entry, or CSV) with a profile of
 * shapes (CSV with a header). For a CSV table, key_columns name the columns
 * forming the key in both files; for a JSON table, key_columns[0] names the
 * profile column that holds the entry key (default "key"). weight_col names
 * the profile column with each row's weight (NULL: every row weighs 1).
 * Errors name the file, line and column.
 */
int research_holes_find(const char *table_path, const char *profile_path,
		     const char *const *key_columns, size_t n_key_columns, const char *weight_col,
		     struct research_holes *out, struct rt_sb *err);
/* One shape a profile saw and its weight (time). */
struct research_hole_obs {
	const char *key; /* the entry key it needs (borrowed) */
	double weight;   /* its time or count, >= 0 */
};
/* The same, from shapes already in memory (an imported profile's kernels);
 * equal keys are summed. */
int research_holes_find_obs(const char *table_path, const struct research_hole_obs *obs, size_t n,
			    const char *const *key_columns, size_t n_key_columns,
			    struct research_holes *out, struct rt_sb *err);
void research_holes_release(struct research_holes *h);

#endif
