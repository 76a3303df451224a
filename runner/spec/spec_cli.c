/*
 * A section of the spec on the command line (spec.h, "a section of the spec
 * on the command line"): the rows of a field table marked FL_CLI become
 * options of `ratchet gate` and `ratchet bench load`, and what was typed is
 * read as a YAML mapping of those keys, built node by node (no text to
 * quote), through the loader's own field parsers and rules. The defaults of
 * a table (.def) go through the same parsers, so a default, its bounds, its
 * words and its help are written once, in the row.
 */
#include "runner/spec/spec_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

static const struct spec_field *section_table(enum spec_section sec)
{
	return sec == SPEC_SECTION_GATE ? spec_gate_fields : spec_load_fields;
}

/* The row of tbl behind offered row i (the i-th with FL_CLI). */
static const struct spec_field *offered_row(const struct spec_field *tbl, size_t i)
{
	for (const struct spec_field *f = tbl; f->key; f++)
		if ((f->flags & FL_CLI) && i-- == 0)
			return f;
	return NULL;
}

/* Index of key among the offered rows, or -1. */
static int offered_index(const struct spec_cli *c, const char *key)
{
	int i = 0;
	for (const struct spec_field *f = section_table(c->sec); f->key; f++) {
		if (!(f->flags & FL_CLI))
			continue;
		if (!strcmp(f->key, key))
			return i;
		i++;
	}
	return -1;
}

/* The generated names and help lines, made once per section and kept for
 * the process: `ratchet help --completion` and the man pages copy the
 * option rows out of a command's describe call and read the strings after
 * the command has returned, as they read every other table's literals. */
static struct {
	char **names; /* by offered row */
	char **helps; /* by offered row */
} strings[SPEC_SECTION_LOAD + 1];

/* The value's placeholder when the row names none. */
static const char *placeholder(const struct spec_field *f)
{
	switch (f->type) {
	case SF_INT: case SF_UINT: case SF_U64: return "N";
	case SF_DUR: return "DUR";
	case SF_FRAC: return "F";
	case SF_ENUM: return "WORD";
	case SF_DBLV: case SF_U64V: return "A,B";
	case SF_CUSTOM: return "K=V";
	default: return f->type == SF_DBL ? "X" : "S";
	}
}

/* The row's help, its words and its default: "API: completions or chat (default completions)". */
static char *option_help(const struct spec_field *f)
{
	struct rt_sb h = RT_SB_INIT;
	rt_sb_adds(&h, f->help ? f->help : "");
	for (size_t i = 0; f->type == SF_ENUM && f->names[i]; i++)
		rt_sb_addf(&h, "%s%s", i ? (f->names[i + 1] ? ", " : " or ") : ": ", f->names[i]);
	if (f->def && f->type != SF_BOOL)
		rt_sb_addf(&h, " (default %s)", f->def);
	return rt_sb_detach(&h, NULL);
}

/* Every value of a repeatable option, comma-joined, or NULL. */
static char *all_values(const char *name, int argc, char **argv)
{
	struct rt_sb v = RT_SB_INIT;
	size_t nl = strlen(name);
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *a = argv[i];
		if (strncmp(a, "--", 2) || strncmp(a + 2, name, nl))
			continue;
		const char *val = a[2 + nl] == '=' ? a + 3 + nl : !a[2 + nl] && i + 1 < argc ? argv[++i] : NULL;
		if (val)
			rt_sb_addf(&v, "%s%s", v.len ? "," : "", val);
	}
	if (!v.len) {
		rt_sb_release(&v);
		return NULL;
	}
	return rt_sb_detach(&v, NULL);
}

void spec_cli_init(struct spec_cli *c, enum spec_section sec, const struct rt_opt *own, int argc,
		   char **argv)
{
	*c = (struct spec_cli){ .sec = sec };
	const struct spec_field *tbl = section_table(sec);
	for (const struct spec_field *f = tbl; f->key; f++)
		c->n += (f->flags & FL_CLI) != 0;
	size_t m = 0;
	while (own && own[m].name)
		m++;
	c->vals = xcalloc(c->n + 1, sizeof(*c->vals));
	c->given = xcalloc(c->n + 1, sizeof(*c->given));
	c->multi = xcalloc(c->n + 1, sizeof(*c->multi));
	c->set = xcalloc(c->n + 1, sizeof(*c->set));
	c->opts = xcalloc(c->n + m + 1, sizeof(*c->opts));
	if (!strings[sec].names) {
		strings[sec].names = xcalloc(c->n + 1, sizeof(char *));
		strings[sec].helps = xcalloc(c->n + 1, sizeof(char *));
		for (size_t i = 0; i < c->n; i++) {
			const struct spec_field *f = offered_row(tbl, i);
			char *name = xstrdup(f->key);
			for (char *p = name; *p; p++)
				*p = *p == '_' ? '-' : *p;
			strings[sec].names[i] = name;
			strings[sec].helps[i] = option_help(f);
		}
	}
	for (size_t i = 0; i < c->n; i++) {
		const struct spec_field *f = offered_row(tbl, i);
		const char *name = strings[sec].names[i];
		bool flag = f->type == SF_BOOL;
		c->opts[i] = (struct rt_opt){ name, f->alias, flag ? RT_OPT_FLAG : RT_OPT_STR,
					      flag ? (void *)&c->given[i] : (void *)&c->vals[i],
					      flag ? NULL : f->arg ? f->arg : placeholder(f),
					      strings[sec].helps[i] };
		if (f->flags & FL_CLI_MULTI)
			c->multi[i] = all_values(name, argc, argv);
	}
	for (size_t j = 0; j < m; j++)
		c->opts[c->n + j] = own[j];
}

const char *spec_cli_get(const struct spec_cli *c, const char *key)
{
	int i = offered_index(c, key);
	if (i < 0)
		return NULL;
	if (c->set[i])
		return c->set[i];
	if (c->multi[i])
		return c->multi[i];
	if (c->given[i])
		return "true";
	return c->vals[i];
}

void spec_cli_set(struct spec_cli *c, const char *key, const char *text)
{
	int i = offered_index(c, key);
	if (i < 0)
		abort(); /* a key no row offers: a programming error */
	free(c->set[i]);
	c->set[i] = xstrdup(text);
}

void spec_cli_release(struct spec_cli *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->multi[i]);
		free(c->set[i]);
	}
	free(c->vals);
	free(c->given);
	free(c->multi);
	free(c->set);
	free(c->opts);
	*c = (struct spec_cli){ 0 };
}

/* ---- texts into a struct, through the loader ---- */

static int scalar(yaml_document_t *doc, const char *s, size_t len)
{
	return yaml_document_add_scalar(doc, NULL, (yaml_char_t *)s, (int)len, YAML_PLAIN_SCALAR_STYLE);
}

/* "a=1,b=2" as a mapping, a later NAME replacing an earlier one; 0, or -1
 * with the entry that is not NAME=VALUE in err. */
static int add_map(yaml_document_t *doc, const char *key, const char *text, struct rt_sb *err)
{
	int map = yaml_document_add_mapping(doc, NULL, YAML_FLOW_MAPPING_STYLE);
	char *dup = xstrdup(text), *save = NULL;
	for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq) {
			rt_errf(err, RT_EUSAGE, "--%s: '%s' is not NAME=VALUE", key, tok);
			free(dup);
			return -1;
		}
		*eq = 0;
		/* the pair's index, not a pointer: adding a node below may move
		 * the document's node array (libyaml reallocs it) */
		yaml_node_t *m = yaml_document_get_node(doc, map);
		ptrdiff_t n = m->data.mapping.pairs.top - m->data.mapping.pairs.start, at = 0;
		for (; at < n; at++) {
			int k = m->data.mapping.pairs.start[at].key;
			if (!strcmp((const char *)yaml_document_get_node(doc, k)->data.scalar.value, tok))
				break;
		}
		int v = scalar(doc, eq + 1, strlen(eq + 1));
		if (at < n)
			yaml_document_get_node(doc, map)->data.mapping.pairs.start[at].value = v;
		else
			yaml_document_append_mapping_pair(doc, map, scalar(doc, tok, strlen(tok)), v);
	}
	free(dup);
	return map;
}

/* One value's node: a list for the list types, a mapping for FL_CLI_MULTI
 * mappings, else a scalar; -1 with err. */
static int value_node(yaml_document_t *doc, const struct spec_field *f, const char *text,
		      struct rt_sb *err)
{
	if (f->type == SF_CUSTOM)
		return add_map(doc, f->key, text, err);
	if (f->type != SF_DBLV && f->type != SF_U64V)
		return scalar(doc, text, strlen(text));
	int seq = yaml_document_add_sequence(doc, NULL, YAML_FLOW_SEQUENCE_STYLE);
	for (const char *p = text;; p++) {
		size_t len = strcspn(p, ",");
		yaml_document_append_sequence_item(doc, seq, scalar(doc, p, len));
		p += len;
		if (!*p)
			break;
	}
	return seq;
}

typedef void (*post_fn)(struct spec_ld *ld, yaml_node_t *map, void *base);

/* texts[j] (or NULL) for row j of tbl, read into base as a mapping of those
 * keys, then post; 0, or RT_EUSAGE with the first error in err. */
static int apply(const struct spec_field *tbl, const char *const *texts, void *base, post_fn post,
		 struct rt_sb *err)
{
	yaml_document_t doc;
	if (!yaml_document_initialize(&doc, NULL, NULL, NULL, 1, 1))
		abort();
	int map = yaml_document_add_mapping(&doc, NULL, YAML_BLOCK_MAPPING_STYLE);
	int rc = 0;
	for (size_t j = 0; tbl[j].key && !rc; j++) {
		if (!texts[j])
			continue;
		int v = value_node(&doc, &tbl[j], texts[j], err);
		if (v < 0)
			rc = RT_EUSAGE;
		else
			yaml_document_append_mapping_pair(&doc, map,
							  scalar(&doc, tbl[j].key, strlen(tbl[j].key)), v);
	}
	struct spec none = { 0 }; /* no workdir: paths stay as typed */
	struct rt_sb msgs = RT_SB_INIT;
	struct spec_ld ld = { .file = "command line", .cli = true, .doc = &doc, .err = &msgs, .s = &none };
	yaml_node_t *root = yaml_document_get_node(&doc, map);
	if (!rc) {
		spec_parse_fields(&ld, root, "", base, tbl, NULL);
		if (post && !ld.nerr)
			post(&ld, root, base);
	}
	if (!rc && ld.nerr) {
		msgs.buf[strcspn(msgs.buf, "\n")] = 0; /* the first error, as a command line shows one */
		rc = rt_errf(err, RT_EUSAGE, "%s", msgs.buf);
	}
	rt_sb_release(&msgs);
	yaml_document_delete(&doc);
	return rc;
}

void spec_fields_defaults(void *base, const struct spec_field *tbl)
{
	size_t n = 0;
	while (tbl[n].key)
		n++;
	const char **texts = xcalloc(n + 1, sizeof(*texts));
	for (size_t j = 0; j < n; j++)
		texts[j] = tbl[j].def;
	struct rt_sb err = RT_SB_INIT;
	if (apply(tbl, texts, base, NULL, &err)) {
		fprintf(stderr, "ratchet: a default of the spec's tables is wrong: %s\n", err.buf);
		abort();
	}
	rt_sb_release(&err);
	free(texts);
}

/* The offered rows' texts by row of the whole table. */
static const char **cli_texts(const struct spec_cli *c)
{
	const struct spec_field *tbl = section_table(c->sec);
	size_t n = 0;
	while (tbl[n].key)
		n++;
	const char **texts = xcalloc(n + 1, sizeof(*texts));
	for (size_t j = 0; j < n; j++)
		if (tbl[j].flags & FL_CLI)
			texts[j] = spec_cli_get(c, tbl[j].key);
	return texts;
}

static void gate_post(struct spec_ld *ld, yaml_node_t *map, void *base)
{
	spec_gate_post(ld, map, "", base);
}

static void load_post(struct spec_ld *ld, yaml_node_t *map, void *base)
{
	spec_load_post(ld, map, "", base);
}

int spec_cli_gate(const struct spec_cli *c, struct spec_gate *g, struct rt_sb *err)
{
	spec_gate_defaults(g);
	const char **texts = cli_texts(c);
	int rc = apply(spec_gate_fields, texts, g, gate_post, err);
	free(texts);
	return rc;
}

int spec_cli_load(const struct spec_cli *c, struct spec_load *l, struct rt_sb *err)
{
	*l = (struct spec_load){ 0 };
	spec_load_defaults(l);
	const char **texts = cli_texts(c);
	int rc = apply(spec_load_fields, texts, l, load_post, err);
	free(texts);
	return rc;
}
