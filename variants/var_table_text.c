/*
 * Byte surgery for table edits (see var_table_int.h): a list of span
 * replacements applied in one pass, the members of a mapping as byte
 * offsets with removal and insertion that copy the mapping's own spacing,
 * line arithmetic, and JSON text for values that are written anew.
 */
#include "variants/var_table_int.h"

#include <stdlib.h>
#include <string.h>

void var_splice_add(struct var_splices *s, size_t start, size_t end, char *text)
{
	s->v = xrealloc(s->v, (s->n + 1) * sizeof(*s->v));
	s->v[s->n] = (struct var_splice){ .start = start, .end = end, .text = text, .seq = s->n };
	s->n++;
}

static int cmp_splice(const void *a, const void *b)
{
	const struct var_splice *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

bool var_text_crlf(const char *d, size_t len)
{
	const char *nl = memchr(d, '\n', len);
	return nl && nl > d && nl[-1] == '\r';
}

/* text appended to out, with "\r\n" for each bare "\n" when crlf. */
static void add_text(struct rt_sb *out, const char *text, bool crlf)
{
	for (const char *p = text; *p; p++) {
		if (crlf && *p == '\n' && (p == text || p[-1] != '\r'))
			rt_sb_addc(out, '\r');
		rt_sb_addc(out, *p);
	}
}

void var_splices_apply(struct var_splices *s, const char *d, size_t len, struct rt_sb *out)
{
	bool crlf = var_text_crlf(d, len);
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), cmp_splice);
	size_t at = 0;
	for (size_t i = 0; i < s->n; i++) {
		const struct var_splice *x = &s->v[i];
		if (x->start > at) {
			rt_sb_add(out, d + at, x->start - at);
			at = x->start;
		}
		add_text(out, x->text, crlf);
		if (x->end > at)
			at = x->end;
		free(x->text);
	}
	if (at < len)
		rt_sb_add(out, d + at, len - at);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

void var_map_release(struct var_map *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->m[i].key);
	free(m->m);
	m->m = NULL;
	m->n = 0;
}

void var_map_add(struct var_map *m, const char *key, size_t key_start, size_t key_end,
		 size_t val_start, size_t val_end)
{
	m->m = xrealloc(m->m, (m->n + 1) * sizeof(*m->m));
	m->m[m->n++] = (struct var_member){ xstrdup(key), key_start, key_end, val_start, val_end };
}

long var_map_find(const struct var_map *m, const char *key, size_t *dups)
{
	long at = -1;
	*dups = 0;
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->m[i].key, key)) {
			at = (long)i; /* the last one, as readers do */
			(*dups)++;
		}
	return at;
}

void var_map_remove(const struct var_map *m, size_t i, struct var_splices *s)
{
	if (i + 1 < m->n) /* the member, its comma and the next one's lead */
		var_splice_add(s, m->m[i].key_start, m->m[i + 1].key_start, xstrdup(""));
	else if (i > 0) /* the comma before the last member, and the member */
		var_splice_add(s, m->m[i - 1].val_end, m->m[i].val_end, xstrdup(""));
	else /* the only member: the mapping becomes {} */
		var_splice_add(s, m->open + 1, m->close, xstrdup(""));
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

void var_map_insert(const struct var_map *m, const char *d, const char *key_text, const char *sep,
		    const char *val_text, size_t *added, struct var_splices *s)
{
	struct rt_sb t = RT_SB_INIT;
	if (m->n) {
		const struct var_member *last = &m->m[m->n - 1];
		size_t lead = last->key_start;
		while (lead > m->open + 1 && is_space(d[lead - 1]))
			lead--;
		rt_sb_addc(&t, ',');
		rt_sb_add(&t, d + lead, last->key_start - lead);
		/* one member right after '{': spaced like its key and value */
		if (m->n == 1 && lead == last->key_start &&
		    memchr(d + last->key_end, ' ', last->val_start - last->key_end))
			rt_sb_addc(&t, ' ');
		rt_sb_adds(&t, key_text);
		rt_sb_add(&t, d + last->key_end, last->val_start - last->key_end);
		rt_sb_adds(&t, val_text);
		var_splice_add(s, last->val_end, last->val_end, rt_sb_detach(&t, NULL));
	} else {
		rt_sb_addf(&t, "%s%s%s%s", *added ? (sep[1] ? ", " : ",") : "", key_text, sep, val_text);
		var_splice_add(s, m->open + 1, m->open + 1, rt_sb_detach(&t, NULL));
	}
	(*added)++;
}

size_t var_line_start(const char *d, size_t at)
{
	while (at > 0 && d[at - 1] != '\n')
		at--;
	return at;
}

size_t var_line_end(const char *d, size_t len, size_t at)
{
	if (at > 0 && d[at - 1] == '\n')
		return at;
	const char *nl = at < len ? memchr(d + at, '\n', len - at) : NULL;
	return nl ? (size_t)(nl - d) + 1 : len;
}

size_t var_line_indent(const char *d, size_t at)
{
	size_t i = var_line_start(d, at), n = 0;
	while (d[i + n] == ' ' || d[i + n] == '\t')
		n++;
	return n;
}

char *var_reindent(const char *text, size_t base, bool first)
{
	struct rt_sb sb = RT_SB_INIT;
	for (const char *p = text; *p; p++) {
		if (p == text ? first : p[-1] == '\n')
			for (size_t k = 0; k < base; k++)
				rt_sb_addc(&sb, ' ');
		rt_sb_addc(&sb, *p);
	}
	if (!sb.len)
		rt_sb_adds(&sb, "");
	return rt_sb_detach(&sb, NULL);
}

char *var_json_text(const json_t *v, size_t unit, bool spaced)
{
	size_t flags = JSON_ENCODE_ANY;
	flags |= unit ? JSON_INDENT(unit > 31 ? 31 : unit) : spaced ? 0 : JSON_COMPACT;
	/* the shortest precision at which every real reads back equal: 0.1 stays
	 * 0.1 (jansson's default, 17 digits, writes 0.10000000000000001) */
	for (int p = 1;; p++) {
		char *s = json_dumps(v, flags | JSON_REAL_PRECISION(p));
		json_t *back = s ? json_loads(s, JSON_DECODE_ANY, NULL) : NULL;
		bool same = back && json_equal(back, (json_t *)v);
		json_decref(back);
		if (same || p >= 17)
			return s ? s : xstrdup("null");
		free(s);
	}
}
