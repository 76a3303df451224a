/*
 * Where a key path of a loaded spec is written: "engine.command[0]",
 * "variants[2].patch.file", in the form the loader's messages use. The
 * spec's text is parsed again and walked with the loader's node helpers,
 * so a check that runs after loading (`ratchet check --preflight`) can
 * name file:line:col as a load error does.
 */
#include "runner/spec/spec_int.h"

#include <stdlib.h>
#include <string.h>

/* The node one step below n: a key ("command") or an index ("[0]"). */
static yaml_node_t *step(struct spec_ld *ld, yaml_node_t *n, const char *key, size_t klen,
			 long index)
{
	if (index >= 0)
		return n->type == YAML_SEQUENCE_NODE && (size_t)index < spec_seq_len(n)
			       ? spec_seq_item(ld, n, (size_t)index)
			       : NULL;
	char *k = xstrndup(key, klen);
	yaml_node_t *v = spec_map_get(ld, n, k);
	free(k);
	return v;
}

int spec_pos_of(const struct spec *s, const char *path, struct rt_pos *out)
{
	*out = (struct rt_pos){ 1, 1 };
	yaml_parser_t pr;
	yaml_document_t doc;
	struct spec_ld ld = { .file = s->path, .doc = &doc };
	yaml_parser_initialize(&pr);
	yaml_parser_set_input_string(&pr, (const unsigned char *)s->text, strlen(s->text));
	int rc = RT_ENOENT;
	if (!yaml_parser_load(&pr, &doc)) {
		yaml_parser_delete(&pr);
		return rc;
	}
	yaml_node_t *n = yaml_document_get_root_node(&doc);
	const char *p = path;
	while (n) {
		*out = spec_node_pos(n);
		if (!*p) {
			rc = 0;
			break;
		}
		if (*p == '.')
			p++;
		if (*p == '[') {
			char *end;
			long i = strtol(p + 1, &end, 10);
			n = *end == ']' ? step(&ld, n, NULL, 0, i) : NULL;
			p = *end == ']' ? end + 1 : p;
		} else {
			size_t len = strcspn(p, ".[");
			n = step(&ld, n, p, len, -1);
			p += len;
		}
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&pr);
	return rc;
}
