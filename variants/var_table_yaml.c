/*
 * YAML tables: a top-level mapping, read by libyaml and
 * runner/base/rt_yaml (its one scalar-typing rule, so entries read here
 * have the types the spec's values have), edited in place. libyaml's marks
 * (counted in characters, turned into byte offsets here) give each node's
 * span; only the changed value (for a set on a mapping entry: only the
 * changed fields) is written anew, by rt_yaml's cautious emitter, so
 * comments, quoting, tags (`!!str 123`) and the layout of every other entry
 * stay as they were.
 *   - a value on its key's line (a scalar, a flow collection) is replaced
 *     in its span, by a scalar or a flow collection on one line;
 *   - a block collection is replaced by whole lines, indented like it;
 *   - a new key goes on a new line after the mapping's last line (block) or
 *     after its last member (flow); a deleted key takes its lines with it.
 */
#include "variants/var_table_int.h"
#include "runner/base/rt_yaml.h"

#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define MAX_DEPTH 64

/* A YAML table being edited. */
struct ydoc {
	const char *d;        /* its bytes */
	size_t len;           /* bytes in d */
	size_t bom;           /* bytes of a UTF-8 byte order mark (libyaml's marks skip it) */
	size_t cur_c, cur_b;  /* last mark converted: characters, and the byte offset of it */
	yaml_document_t doc;  /* the document libyaml read */
	size_t *refs;         /* references to each node id (index id - 1); 2+: an alias (owned) */
	size_t unit;          /* indent step for new block content */
};

/* Byte offset of the character index libyaml marks: walked from the last
 * one converted, so converting marks in order costs one pass. */
static size_t ybyte(struct ydoc *y, size_t index)
{
#define CONT(c) (((unsigned char)(c) & 0xC0) == 0x80)
	while (y->cur_c < index && y->cur_b < y->len) {
		y->cur_b++;
		while (y->cur_b < y->len && CONT(y->d[y->cur_b]))
			y->cur_b++;
		y->cur_c++;
	}
	while (y->cur_c > index && y->cur_b > y->bom) {
		y->cur_b--;
		while (y->cur_b > y->bom && CONT(y->d[y->cur_b]))
			y->cur_b--;
		y->cur_c--;
	}
#undef CONT
	return y->cur_b;
}

/* Start of the line holding at, after a byte order mark. */
static size_t ylstart(const struct ydoc *y, size_t at)
{
	size_t ls = var_line_start(y->d, at);
	return ls < y->bom ? y->bom : ls;
}

static yaml_node_t *node(struct ydoc *y, int id)
{
	return yaml_document_get_node(&y->doc, id);
}

/* Count the references to every node: an alias (*name) is the node its
 * anchor names, read once more. */
static void count_refs(struct ydoc *y)
{
	size_t n = (size_t)(y->doc.nodes.top - y->doc.nodes.start);
	y->refs = xcalloc(n + 1, sizeof(*y->refs));
	if (n)
		y->refs[0]++; /* the root */
	for (yaml_node_t *x = y->doc.nodes.start; x < y->doc.nodes.top; x++) {
		if (x->type == YAML_MAPPING_NODE) {
			for (yaml_node_pair_t *p = x->data.mapping.pairs.start; p < x->data.mapping.pairs.top; p++) {
				y->refs[p->key - 1]++;
				y->refs[p->value - 1]++;
			}
		} else if (x->type == YAML_SEQUENCE_NODE) {
			for (yaml_node_item_t *i = x->data.sequence.items.start; i < x->data.sequence.items.top; i++)
				y->refs[*i - 1]++;
		}
	}
}

/* Whether node id, or one under it, is also read through an alias:
 * editing its text would change the other place too. */
static bool shared(struct ydoc *y, int id, int depth)
{
	yaml_node_t *n = node(y, id);
	if (y->refs[id - 1] > 1 || depth > MAX_DEPTH)
		return true;
	if (n->type == YAML_MAPPING_NODE)
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++)
			if (shared(y, p->key, depth + 1) || shared(y, p->value, depth + 1))
				return true;
	if (n->type == YAML_SEQUENCE_NODE)
		for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++)
			if (shared(y, *i, depth + 1))
				return true;
	return false;
}

static bool is_block(const yaml_node_t *n)
{
	return (n->type == YAML_MAPPING_NODE && n->data.mapping.style != YAML_FLOW_MAPPING_STYLE) ||
	       (n->type == YAML_SEQUENCE_NODE && n->data.sequence.style != YAML_FLOW_SEQUENCE_STYLE);
}

/* Character index where n's text ends: a block collection's end mark lies
 * at the next token, so it ends with its last descendant. */
static size_t node_last(struct ydoc *y, yaml_node_t *n, int depth)
{
	if (!is_block(n) || depth > MAX_DEPTH)
		return n->end_mark.index;
	size_t end = n->start_mark.index, e;
	if (n->type == YAML_MAPPING_NODE) {
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
			if ((e = node_last(y, node(y, p->key), depth + 1)) > end)
				end = e;
			if ((e = node_last(y, node(y, p->value), depth + 1)) > end)
				end = e;
		}
	} else {
		for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++)
			if ((e = node_last(y, node(y, *i), depth + 1)) > end)
				end = e;
	}
	return end;
}

/* Character index where a block collection's content starts (its first
 * key: the node's own mark may lie at a tag or an anchor). */
/* The column at which a block node's line content starts, given its first
 * byte at: its own column, or that of the "?" introducing it as a complex
 * key (libyaml's emitter writes a key longer than 128 characters as
 * "? 'key'" then ": value"), so that text written at that column reads
 * back at the same one. */
static size_t ycol(struct ydoc *y, size_t at)
{
	size_t ls = ylstart(y, at), q = at;
	while (q > ls && y->d[q - 1] == ' ')
		q--;
	return (q > ls && y->d[q - 1] == '?' ? q - 1 : at) - ls;
}

static size_t node_first(struct ydoc *y, yaml_node_t *n)
{
	if (n->type == YAML_MAPPING_NODE && n->data.mapping.pairs.start < n->data.mapping.pairs.top)
		return node(y, n->data.mapping.pairs.start->key)->start_mark.index;
	return n->start_mark.index;
}

/* The members of mapping n as byte offsets (keys that are not scalars
 * match no key). */
static void ymap(struct ydoc *y, yaml_node_t *n, struct var_map *m)
{
	*m = (struct var_map){ 0 };
	if (!is_block(n)) {
		m->open = ybyte(y, n->start_mark.index);
		while (m->open < y->len && y->d[m->open] != '{')
			m->open++; /* past a tag or an anchor */
		m->close = ybyte(y, n->end_mark.index) - 1;
	}
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(y, p->key), *v = node(y, p->value);
		char *key = k->type == YAML_SCALAR_NODE
				    ? xstrndup((const char *)k->data.scalar.value, k->data.scalar.length)
				    : xstrdup("\x01 not a scalar");
		size_t ks = ybyte(y, k->start_mark.index), ke = ybyte(y, k->end_mark.index);
		size_t vs = ybyte(y, v->start_mark.index), ve = ybyte(y, node_last(y, v, 0));
		var_map_add(m, key, ks, ke, vs, ve);
		free(key);
	}
}

/* Emitted YAML without document markers or the final line break. */
static void strip_markers(struct rt_sb *sb)
{
	if (sb->len >= 4 && !memcmp(sb->buf, "--- ", 4)) {
		memmove(sb->buf, sb->buf + 4, sb->len - 3);
		sb->len -= 4;
	}
	if (sb->len >= 4 && !memcmp(sb->buf + sb->len - 4, "...\n", 4))
		sb->len -= 4;
	while (sb->len && sb->buf[sb->len - 1] == '\n')
		sb->len--;
	sb->buf[sb->len] = 0;
}

/* v as YAML on one line: collections in flow style, scalars quoted where a
 * reader could take them for another type; JSON (also YAML) when the
 * emitter needs more than a line. Caller frees. */
static char *inline_text(const json_t *v)
{
	yaml_document_t doc;
	struct rt_sb out = RT_SB_INIT, why = RT_SB_INIT;
	int rc = RT_ENOMEM;
	if (yaml_document_initialize(&doc, NULL, NULL, NULL, 1, 1)) {
		if (rt_yaml_add_json(&doc, v)) {
			for (yaml_node_t *n = doc.nodes.start; n < doc.nodes.top; n++) {
				if (n->type == YAML_MAPPING_NODE)
					n->data.mapping.style = YAML_FLOW_MAPPING_STYLE;
				else if (n->type == YAML_SEQUENCE_NODE)
					n->data.sequence.style = YAML_FLOW_SEQUENCE_STYLE;
			}
			rc = rt_yaml_emit(&doc, &out, &why); /* consumes doc */
		} else {
			yaml_document_delete(&doc);
		}
	}
	rt_sb_release(&why);
	if (!rc)
		strip_markers(&out);
	if (rc || !out.len || memchr(out.buf, '\n', out.len)) {
		rt_sb_release(&out);
		return var_json_text(v, 0, true);
	}
	return rt_sb_detach(&out, NULL);
}

static bool nonempty_collection(const json_t *v)
{
	return (json_is_object(v) && json_object_size(v)) || (json_is_array(v) && json_array_size(v));
}

/* v (a non-empty collection) as block YAML, every line indented by col and
 * ended by a line break. Caller frees. */
static char *block_text(const json_t *v, size_t col)
{
	struct rt_sb out = RT_SB_INIT, why = RT_SB_INIT;
	int rc = rt_yaml_from_json(v, &out, &why);
	rt_sb_release(&why);
	if (!rc)
		strip_markers(&out);
	if (rc || !out.len) {
		rt_sb_release(&out);
		char *t = inline_text(v);
		out = (struct rt_sb)RT_SB_INIT;
		rt_sb_adds(&out, t);
		free(t);
	}
	rt_sb_addc(&out, '\n');
	char *r = var_reindent(out.buf, col, true);
	rt_sb_release(&out);
	return r;
}

/* "key: value" on its own line(s) at column col of a block mapping. */
static char *member_text(const char *key, const json_t *v, size_t col, size_t unit)
{
	json_t *k = json_string(key);
	char *kt = inline_text(k);
	struct rt_sb sb = RT_SB_INIT;
	for (size_t i = 0; i < col; i++)
		rt_sb_addc(&sb, ' ');
	rt_sb_adds(&sb, kt);
	char *vt = nonempty_collection(v) ? block_text(v, col + unit) : inline_text(v);
	rt_sb_addf(&sb, nonempty_collection(v) ? ":\n%s" : ": %s\n", vt);
	free(vt);
	free(kt);
	json_decref(k);
	return rt_sb_detach(&sb, NULL);
}

/* The value of pair j of mapping map (member m) replaced by v. */
static void replace_value(struct ydoc *y, yaml_node_t *map, size_t j, const struct var_member *m,
			  const json_t *v, struct var_splices *s)
{
	yaml_node_t *vn = node(y, map->data.mapping.pairs.start[j].value);
	if (is_block(vn)) {
		size_t end = var_line_end(y->d, y->len, m->val_end);
		size_t first = ybyte(y, node_first(y, vn)), ls = ylstart(y, first);
		if (nonempty_collection(v) && ls > m->key_start) { /* whole lines, indented like them */
			size_t col = ycol(y, first), key_col = var_line_indent(y->d, m->key_start);
			if (json_is_object(v) && col <= key_col)
				col = key_col + y->unit;
			var_splice_add(s, ls, end, block_text(v, col));
		} else {
			char *t = inline_text(v);
			var_splice_add(s, m->key_end, end, xasprintf(": %s\n", t));
			free(t);
		}
		return;
	}
	char *t = inline_text(v);
	bool after_colon = m->val_start == m->val_end && m->val_start && y->d[m->val_start - 1] == ':';
	/* a literal or folded scalar ends after its last line break */
	bool block_scalar = vn->type == YAML_SCALAR_NODE && m->val_end > m->val_start &&
			    y->d[m->val_end - 1] == '\n';
	var_splice_add(s, m->val_start, m->val_end,
		       xasprintf("%s%s%s", after_colon ? " " : "", t, block_scalar ? "\n" : ""));
	free(t);
}

/* A new member at the end of mapping map (members m). */
static void add_member(struct ydoc *y, yaml_node_t *map, const struct var_map *m, const char *key,
		       const json_t *v, size_t *added, struct var_splices *s)
{
	if (!is_block(map)) {
		json_t *k = json_string(key);
		char *kt = inline_text(k), *vt = inline_text(v);
		var_map_insert(m, y->d, kt, ": ", vt, added, s);
		free(kt);
		free(vt);
		json_decref(k);
		return;
	}
	size_t at = var_line_end(y->d, y->len, ybyte(y, node_last(y, map, 0)));
	size_t col = m->n ? ycol(y, m->m[0].key_start) : 0;
	char *t = member_text(key, v, col, y->unit);
	if (!*added && at == y->len && y->len && y->d[y->len - 1] != '\n') {
		char *nl = xasprintf("\n%s", t);
		free(t);
		t = nl;
	}
	var_splice_add(s, at, at, t);
	(*added)++;
}

/* A set on a mapping entry: each field changed in place or added. */
static void merge_fields(struct ydoc *y, yaml_node_t *entry, const json_t *fields,
			 struct var_splices *s)
{
	struct var_map em;
	struct rt_yaml_err ye;
	size_t added = 0, dups;
	const char *k;
	json_t *x;
	ymap(y, entry, &em);
	json_object_foreach((json_t *)fields, k, x) {
		long f = var_map_find(&em, k, &dups);
		if (f < 0) {
			add_member(y, entry, &em, k, x, &added, s);
			continue;
		}
		json_t *old = rt_yaml_to_json(&y->doc, node(y, entry->data.mapping.pairs.start[f].value), &ye);
		if (!old || !var_tbl_same(old, x)) /* an unchanged field keeps its bytes */
			replace_value(y, entry, (size_t)f, &em.m[f], x, s);
		json_decref(old);
	}
	var_map_release(&em);
}

/* Read d; the root must be a mapping (an empty document is one with no
 * entries only when reading back: root NULL). */
static int ydoc_load(struct ydoc *y, const struct var_def_table *t, const char *d, size_t len,
		     struct rt_sb *err)
{
	*y = (struct ydoc){ .d = d, .len = len, .unit = 2 };
	y->bom = len >= 3 && !memcmp(d, "\xEF\xBB\xBF", 3) ? 3 : 0;
	y->cur_b = y->bom;
	yaml_parser_t parser;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)d, len);
	int rc = 0;
	if (!yaml_parser_load(&parser, &y->doc))
		rc = rt_errf(err, RT_EPARSE, "%s:%zu:%zu: invalid YAML: %s", t->file,
			     parser.problem_mark.line + 1, parser.problem_mark.column + 1,
			     parser.problem ? parser.problem : "error");
	else if (parser.encoding != YAML_UTF8_ENCODING)
		rc = rt_errf(err, RT_EPARSE, "%s: only UTF-8 YAML tables can be edited", t->file);
	if (rc && parser.error == YAML_NO_ERROR)
		yaml_document_delete(&y->doc);
	yaml_parser_delete(&parser);
	if (!rc)
		count_refs(y);
	return rc;
}

static void ydoc_release(struct ydoc *y)
{
	yaml_document_delete(&y->doc);
	free(y->refs);
	y->refs = NULL;
}

/* The root mapping and the pair of t->key in it (-1 when absent). */
static int yentry(struct ydoc *y, const struct var_def_table *t, yaml_node_t **root, long *at,
		  struct rt_sb *err)
{
	*root = yaml_document_get_root_node(&y->doc);
	*at = -1;
	if (!*root || (*root)->type != YAML_MAPPING_NODE)
		return rt_errf(err, RT_EPARSE, "%s: top level is not a mapping", t->file);
	size_t dups = 0;
	yaml_node_pair_t *p0 = (*root)->data.mapping.pairs.start;
	for (yaml_node_pair_t *p = p0; p < (*root)->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(y, p->key);
		if (k->type == YAML_SCALAR_NODE && k->data.scalar.length == strlen(t->key) &&
		    !memcmp(k->data.scalar.value, t->key, k->data.scalar.length)) {
			*at = p - p0;
			dups++;
		}
	}
	if (dups > 1)
		return rt_errf(err, RT_EPARSE, "%s: key \"%s\" appears %zu times", t->file, t->key, dups);
	return 0;
}

/* The entry's value as JSON (NULL when absent), or an error at its line. */
static int yentry_json(struct ydoc *y, const struct var_def_table *t, yaml_node_t *root, long at,
		       json_t **out, struct rt_sb *err)
{
	struct rt_yaml_err ye;
	*out = NULL;
	if (at < 0)
		return 0;
	if (!(*out = rt_yaml_to_json(&y->doc, node(y, root->data.mapping.pairs.start[at].value), &ye)))
		return rt_errf(err, RT_EPARSE, "%s:%d:%d: %s", t->file,
			       ye.at ? (int)ye.at->start_mark.line + 1 : 1,
			       ye.at ? (int)ye.at->start_mark.column + 1 : 1, ye.msg);
	return 0;
}

/* The indent step of the entries: the first block mapping entry's. */
static size_t yunit(struct ydoc *y, yaml_node_t *root, const struct var_map *m)
{
	for (size_t i = 0; i < m->n; i++) {
		yaml_node_t *v = node(y, root->data.mapping.pairs.start[i].value);
		if (v->type != YAML_MAPPING_NODE || !is_block(v))
			continue;
		size_t col = ycol(y, ybyte(y, node_first(y, v)));
		size_t kcol = ycol(y, m->m[i].key_start);
		return col > kcol ? col - kcol : 2;
	}
	return 2;
}

static int yaml_change(struct ydoc *y, const struct var_def_table *t, yaml_node_t *root, long at,
		       const struct var_tbl_edit *e, struct var_splices *s, struct rt_sb *err)
{
	struct var_map rm;
	size_t added = 0;
	if (at >= 0 && shared(y, root->data.mapping.pairs.start[at].value, 0))
		return rt_errf(err, RT_EINVAL,
			       "%s: entry \"%s\" is also read through a YAML alias; edit it by hand",
			       t->file, t->key);
	ymap(y, root, &rm);
	y->unit = yunit(y, root, &rm);
	if (!e->new_entry && is_block(root)) {
		const struct var_member *m = &rm.m[at];
		var_splice_add(s, ylstart(y, m->key_start), var_line_end(y->d, y->len, m->val_end),
			       xstrdup(""));
	} else if (!e->new_entry) {
		var_map_remove(&rm, (size_t)at, s);
	} else if (at < 0) {
		add_member(y, root, &rm, t->key, e->new_entry, &added, s);
	} else {
		yaml_node_t *vn = node(y, root->data.mapping.pairs.start[at].value);
		if (t->op == VAR_TBL_SET && vn->type == YAML_MAPPING_NODE && json_is_object(t->value))
			merge_fields(y, vn, t->value, s);
		else
			replace_value(y, root, (size_t)at, &rm.m[at], e->new_entry, s);
	}
	var_map_release(&rm);
	return 0;
}

/* The new bytes read back: the entry is the planned one (or gone). */
static int yaml_check(const struct var_def_table *t, const struct var_tbl_edit *e, struct rt_sb *err)
{
	struct ydoc y;
	struct rt_sb why = RT_SB_INIT;
	yaml_node_t *root;
	long at = -1;
	json_t *now = NULL;
	bool ok = false;
	if (!ydoc_load(&y, t, e->out.buf, e->out.len, &why)) {
		if (!yaml_document_get_root_node(&y.doc)) /* every entry deleted */
			ok = !e->new_entry;
		else if (!yentry(&y, t, &root, &at, &why) && !yentry_json(&y, t, root, at, &now, &why))
			ok = e->new_entry ? now && var_tbl_same(now, e->new_entry) : !now;
		ydoc_release(&y);
	}
	json_decref(now);
	rt_sb_release(&why);
	return ok ? 0 : var_tbl_readback_err(t, err);
}

int var_tbl_edit_yaml(const struct var_def *v, const char *d, size_t len, struct var_tbl_edit *e,
		      struct rt_sb *err)
{
	const struct var_def_table *t = &v->table;
	struct ydoc y;
	yaml_node_t *root = NULL;
	long at = -1;
	int rc = ydoc_load(&y, t, d, len, err);
	if (rc)
		return rc;
	rc = yentry(&y, t, &root, &at, err);
	if (!rc)
		rc = yentry_json(&y, t, root, at, &e->old_entry, err);
	if (!rc)
		rc = var_tbl_compute_new(v, e, err);
	if (!rc) {
		struct var_splices s = { 0 };
		rc = yaml_change(&y, t, root, at, e, &s, err);
		var_splices_apply(&s, d, len, &e->out);
	}
	ydoc_release(&y);
	return rc ? rc : yaml_check(t, e, err);
}
