/*
 * Internals of the table kind, shared by its formats (var_table.c: the ops
 * and the change itself; var_table_csv.c, var_table_json.c,
 * var_table_yaml.c: one format each; var_table_text.c: byte surgery).
 *
 * Every format edits the bytes of the one entry it changes and copies every
 * other byte as it was ("splicing"): the entry is found by byte offsets
 * (CSV rows, jansson's read positions, libyaml's marks), the new text of
 * the entry (or of the fields a set changes) replaces the old span, and the
 * result is read back to check it holds the planned entry.
 */
#ifndef RT_VAR_TABLE_INT_H
#define RT_VAR_TABLE_INT_H

#include "variants/var.h"

/* Shared result of every format: the entry before and after (NULL: absent). */
struct var_tbl_edit {
	json_t *old_entry; /* entry now, or NULL (owned) */
	json_t *new_entry; /* entry after, or NULL for delete (owned) */
	struct rt_sb out;  /* the new file bytes */
};

/* The new entry from the old one and the op; 0 or an error naming file and key. */
int var_tbl_compute_new(const struct var_def *v, struct var_tbl_edit *e, struct rt_sb *err);
/* Text of a JSON value for people and CSV cells: strings raw, the rest
 * compact JSON. Caller frees. */
char *var_tbl_val_text(json_t *v);
/* Equal as table values: numbers by value (64 == 64.0), the rest as
 * json_equal, recursively. */
bool var_tbl_same(const json_t *a, const json_t *b);

/* One format's edit: fills e (out, old_entry, new_entry) from the file's bytes. */
int var_tbl_edit_csv(const struct var_def *v, const char *d, size_t len, struct var_tbl_edit *e,
		     struct rt_sb *err);
int var_tbl_edit_json(const struct var_def *v, const char *d, size_t len, struct var_tbl_edit *e,
		      struct rt_sb *err);
int var_tbl_edit_yaml(const struct var_def *v, const char *d, size_t len, struct var_tbl_edit *e,
		      struct rt_sb *err);
/* The error when the spliced bytes do not read back as planned (a layout
 * the splicing does not handle); the file is left alone. */
int var_tbl_readback_err(const struct var_def_table *t, struct rt_sb *err);

/* ---- byte surgery (var_table_text.c) ---- */

/* Replacements of byte spans [start, end) of one text; spans do not overlap
 * (insertions, start == end, may share a point and keep their order). */
struct var_splice {
	size_t start, end; /* the span replaced */
	char *text;        /* its new bytes (owned) */
	size_t seq;        /* order of addition, for insertions at one point */
};

struct var_splices {
	struct var_splice *v; /* in order of addition */
	size_t n;             /* entries in v */
};

/* Add one replacement; text is consumed. */
void var_splice_add(struct var_splices *s, size_t start, size_t end, char *text);
/* Whether the text's lines end with "\r\n" (its first line break). */
bool var_text_crlf(const char *d, size_t len);
/* d with every replacement made, appended to out; s is released. When d's
 * lines end with "\r\n", so do those of the new text. */
void var_splices_apply(struct var_splices *s, const char *d, size_t len, struct rt_sb *out);

/* One key: value member of a mapping, as byte offsets. */
struct var_member {
	char *key;                 /* the key as read (owned) */
	size_t key_start, key_end; /* the key's bytes (quotes included) */
	size_t val_start, val_end; /* the value's bytes */
};

/* A mapping written between braces (a JSON object, a YAML flow mapping), or
 * a YAML block mapping (open and close unused). */
struct var_map {
	size_t open, close;   /* offsets of '{' and '}' */
	struct var_member *m; /* members in order (owned) */
	size_t n;             /* entries in m */
};

void var_map_release(struct var_map *m);
/* Add a member; key is copied. */
void var_map_add(struct var_map *m, const char *key, size_t key_start, size_t key_end,
		 size_t val_start, size_t val_end);
/* Index of the last member named key, or -1; *dups gets how many there are. */
long var_map_find(const struct var_map *m, const char *key, size_t *dups);
/* Remove member i of a braced mapping with its separator. */
void var_map_remove(const struct var_map *m, size_t i, struct var_splices *s);
/* Add a member "key_text SEP val_text" at the end of a braced mapping,
 * spaced like its last member (sep, ": " or ":", when it has none); *added
 * counts members added so far. key_text and val_text are copied. */
void var_map_insert(const struct var_map *m, const char *d, const char *key_text, const char *sep,
		    const char *val_text, size_t *added, struct var_splices *s);

/* Offset of the start of the line holding at. */
size_t var_line_start(const char *d, size_t at);
/* Offset just after the line break ending the line that holds the byte
 * before at (at itself when it follows a line break), or len. */
size_t var_line_end(const char *d, size_t len, size_t at);
/* Spaces and tabs at the start of the line holding at. */
size_t var_line_indent(const char *d, size_t at);
/* text with base spaces put at the start of every line after the first
 * (first: the first line too); a final line break gets none. Caller frees. */
char *var_reindent(const char *text, size_t base, bool first);
/* v as JSON text: indented by unit spaces per level (0: one line, with
 * ", " and ": " when spaced, else compact); reals in the shortest form that
 * reads back equal. Caller frees. */
char *var_json_text(const json_t *v, size_t unit, bool spaced);

#endif
