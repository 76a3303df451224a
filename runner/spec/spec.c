/*
 * The campaign spec loader: YAML (libyaml's document API) into the typed
 * structs of spec.h. This file holds what every section uses (messages,
 * node helpers, paths) and the loading of the document itself; the field
 * tables and section parsers live in the other spec_*.c files (see
 * spec_int.h). Errors are collected, up to SPEC_MAX_ERRORS, one per line,
 * each "file:line:col: key.path: message".
 */
#include "runner/spec/spec_int.h"
#include "runner/base/rt_yaml.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- messages ---- */

static void vlerr(struct spec_ld *ld, int line, int col, const char *path, const char *fmt,
		  va_list ap)
{
	if (ld->nerr >= SPEC_MAX_ERRORS) {
		ld->dropped++;
		return;
	}
	ld->nerr++;
	rt_sb_addf(ld->err, "%s:%d:%d: ", ld->file, line, col);
	if (path && *path)
		rt_sb_addf(ld->err, "%s: ", path);
	rt_sb_vaddf(ld->err, fmt, ap);
	rt_sb_addc(ld->err, '\n');
}

struct rt_pos spec_node_pos(const yaml_node_t *n)
{
	struct rt_pos p = { 1, 1 };
	if (n) {
		p.line = (int)n->start_mark.line + 1;
		p.col = (int)n->start_mark.column + 1;
	}
	return p;
}

void spec_lerr(struct spec_ld *ld, const yaml_node_t *at, const char *path, const char *fmt, ...)
{
	struct rt_pos p = spec_node_pos(at);
	va_list ap;
	va_start(ap, fmt);
	vlerr(ld, p.line, p.col, path, fmt, ap);
	va_end(ap);
}

void spec_lerr_at(struct spec_ld *ld, struct rt_pos pos, const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlerr(ld, pos.line ? pos.line : 1, pos.col ? pos.col : 1, path, fmt, ap);
	va_end(ap);
}

void spec_lwarn_at(struct spec_ld *ld, struct rt_pos pos, const char *path, const char *fmt, ...)
{
	struct rt_sb sb = RT_SB_INIT;
	if (ld->s->warnings)
		rt_sb_adds(&sb, ld->s->warnings);
	rt_sb_addf(&sb, "%s:%d:%d: %s: warning: ", ld->file, pos.line ? pos.line : 1, pos.col ? pos.col : 1,
		   path);
	va_list ap;
	va_start(ap, fmt);
	rt_sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	rt_sb_addc(&sb, '\n');
	free(ld->s->warnings);
	ld->s->warnings = rt_sb_detach(&sb, NULL);
}

/* "a.b", or "b" at the top. */
char *spec_path_join(const char *path, const char *key)
{
	if (!path || !*path)
		return xstrdup(key);
	return xasprintf("%s.%s", path, key);
}

char *spec_path_index(const char *path, size_t i)
{
	return xasprintf("%s[%zu]", path, i);
}

/* ---- node helpers ---- */

const char *spec_scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

bool spec_is_null(const yaml_node_t *n)
{
	return rt_yaml_is_null(n);
}

/* What a node is, for "expected X, got Y". */
const char *spec_got(const yaml_node_t *n, char *buf, size_t len)
{
	if (!n)
		return "nothing";
	if (n->type == YAML_MAPPING_NODE)
		return "a mapping";
	if (n->type == YAML_SEQUENCE_NODE)
		return "a list";
	if (spec_is_null(n))
		return "null";
	const char *s = spec_scalar(n);
	snprintf(buf, len, "'%.60s'", s ? s : "");
	return buf;
}

yaml_node_t *spec_node(struct spec_ld *ld, int id)
{
	return yaml_document_get_node(ld->doc, id);
}

yaml_node_t *spec_map_get(struct spec_ld *ld, yaml_node_t *map, const char *key)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		const char *k = spec_scalar(spec_node(ld, p->key));
		if (k && !strcmp(k, key))
			return spec_node(ld, p->value);
	}
	return NULL;
}

size_t spec_seq_len(const yaml_node_t *v)
{
	return (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
}

yaml_node_t *spec_seq_item(struct spec_ld *ld, yaml_node_t *v, size_t i)
{
	return spec_node(ld, v->data.sequence.items.start[i]);
}

bool spec_want_seq(struct spec_ld *ld, yaml_node_t *v, const char *path)
{
	char buf[80];
	if (v->type == YAML_SEQUENCE_NODE)
		return true;
	spec_lerr(ld, v, path, "expected a list, got %s", spec_got(v, buf, sizeof(buf)));
	return false;
}

bool spec_want_map(struct spec_ld *ld, yaml_node_t *v, const char *path)
{
	char buf[80];
	if (v && v->type == YAML_MAPPING_NODE)
		return true;
	spec_lerr(ld, v, path, "expected a mapping, got %s", spec_got(v, buf, sizeof(buf)));
	return false;
}

json_t *spec_node_json(struct spec_ld *ld, yaml_node_t *n, const char *path)
{
	struct rt_yaml_err e;
	json_t *j = rt_yaml_to_json(ld->doc, n, &e);
	if (!j)
		spec_lerr(ld, e.at ? e.at : n, path, "%s", e.msg);
	return j;
}

/* ---- paths ---- */

/* Lexically normalize an absolute path: drop "." and "//", fold "x/..". */
static char *absolute(const char *p)
{
	if (p[0] == '/')
		return rt_path_normalize_abs(p);
	char cwd[4096];
	if (!getcwd(cwd, sizeof(cwd)))
		strcpy(cwd, "/");
	char *j = xasprintf("%s/%s", cwd, p);
	char *r = rt_path_normalize_abs(j);
	free(j);
	return r;
}

char *spec_resolve(const struct spec *s, const char *p)
{
	if (p[0] == '/' || p[0] == '{' || !s->workdir)
		return xstrdup(p);
	char *j = xasprintf("%s/%s", s->workdir, p);
	char *r = rt_path_normalize_abs(j);
	free(j);
	return r;
}

/* ---- the document ---- */

/* libyaml rejects tabs in indentation with a generic message; say why. */
static bool tab_error(struct spec_ld *ld, const char *text, size_t len, size_t upto_line)
{
	size_t line = 1;
	const char *p = text, *end = text + len;
	while (p < end && line <= upto_line) {
		const char *q = p;
		while (q < end && (*q == ' ' || *q == '\t')) {
			if (*q == '\t') {
				const char *nl = memchr(q, '\n', (size_t)(end - q));
				const char *e2 = nl ? nl : end;
				bool content = false;
				for (const char *r = q; r < e2; r++)
					content |= !isspace((unsigned char)*r);
				if (content) {
					if (ld->nerr < SPEC_MAX_ERRORS) {
						ld->nerr++;
						rt_sb_addf(ld->err,
							   "%s:%zu:%zu: tab character in indentation (YAML indents with spaces)\n",
							   ld->file, line, (size_t)(q - p) + 1);
					}
					return true;
				}
				break;
			}
			q++;
		}
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
		p = nl + 1;
		line++;
	}
	return false;
}

static void syntax_error(struct spec_ld *ld, yaml_parser_t *pr, const char *text, size_t len)
{
	yaml_mark_t m = pr->problem_mark;
	if (pr->error == YAML_SCANNER_ERROR || pr->error == YAML_PARSER_ERROR) {
		if (tab_error(ld, text, len, m.line + 1))
			return;
	}
	ld->nerr++;
	if (pr->error == YAML_READER_ERROR) {
		rt_sb_addf(ld->err, "%s:1:1: %s at byte %zu\n", ld->file,
			   pr->problem ? pr->problem : "cannot read", pr->problem_offset);
		return;
	}
	rt_sb_addf(ld->err, "%s:%zu:%zu: %s", ld->file, m.line + 1, m.column + 1,
		   pr->problem ? pr->problem : "syntax error");
	if (pr->context)
		rt_sb_addf(ld->err, " (%s at %zu:%zu)", pr->context, pr->context_mark.line + 1,
			   pr->context_mark.column + 1);
	rt_sb_addc(ld->err, '\n');
}

/* Folder of the spec file, absolute. */
static char *spec_folder(const char *name)
{
	char *abs = absolute(name);
	char *slash = strrchr(abs, '/');
	if (slash == abs)
		abs[1] = '\0';
	else if (slash)
		*slash = '\0';
	return abs;
}


/* workdir first: every relative path resolves against it */
static void load_workdir(struct spec_ld *ld, yaml_node_t *root, const char *name)
{
	struct spec *s = ld->s;
	yaml_node_t *wd = spec_map_get(ld, root, "workdir");
	char *folder = spec_folder(name);
	const char *w = wd ? spec_want_scalar(ld, wd, "workdir", "a path") : NULL;
	if (w && *w) {
		char *j = w[0] == '/' ? xstrdup(w) : xasprintf("%s/%s", folder, w);
		s->workdir = rt_path_normalize_abs(j);
		free(j);
	}
	if (!s->workdir)
		s->workdir = xstrdup(folder);
	free(folder);
}

static void load_root(struct spec_ld *ld, yaml_node_t *root, const char *name)
{
	char buf[80];
	if (!root || spec_is_null(root)) {
		spec_lerr(ld, NULL, "", "empty spec");
		return;
	}
	if (root->type != YAML_MAPPING_NODE) {
		spec_lerr(ld, root, "", "expected a mapping at the top, got %s",
			  spec_got(root, buf, sizeof(buf)));
		return;
	}
	load_workdir(ld, root, name);
	spec_defaults(ld->s);
	spec_parse_fields(ld, root, "", ld->s, spec_top_fields, NULL);
	spec_post_validate(ld, root);
}

int spec_load_text(const char *name, const char *text, size_t len, struct spec **out,
		   struct rt_sb *err)
{
	*out = NULL;
	struct spec *s = xcalloc(1, sizeof(*s));
	s->path = xstrdup(name);
	s->text = xstrndup(text, len);
	rt_sha256_hex(text, len, s->sha256);

	yaml_parser_t pr;
	yaml_document_t doc;
	struct rt_sb tmp = RT_SB_INIT;
	struct spec_ld ld = { .file = name, .doc = &doc, .err = err ? err : &tmp, .s = s };
	yaml_parser_initialize(&pr);
	yaml_parser_set_input_string(&pr, (const unsigned char *)s->text, len);
	if (yaml_parser_load(&pr, &doc)) {
		load_root(&ld, yaml_document_get_root_node(&doc), name);
		spec_names_release(&ld);
		yaml_document_delete(&doc);
	} else {
		syntax_error(&ld, &pr, s->text, len);
	}
	yaml_parser_delete(&pr);
	free(ld.bare_metric);
	if (ld.dropped)
		rt_sb_addf(ld.err, "%s: %d more error%s not shown\n", name, ld.dropped,
			   ld.dropped == 1 ? "" : "s");
	rt_sb_release(&tmp);
	if (ld.nerr) {
		spec_free(s);
		return RT_EUSAGE;
	}
	*out = s;
	return 0;
}

int spec_load(const char *path, struct spec **out, struct rt_sb *err)
{
	char *text;
	size_t len;
	struct rt_sb e = RT_SB_INIT;
	*out = NULL;
	int rc = rt_read_file(path, &text, &len, &e);
	if (rc) {
		rt_errf(err, 0, "%s\n", e.buf);
		rt_sb_release(&e);
		return RT_EIO;
	}
	rc = spec_load_text(path, text, len, out, err);
	free(text);
	return rc;
}
