/*
 * RFC 4180 CSV rows with their byte offsets, so a table edit can rewrite one
 * row and keep every other byte; also read by the research side (agents/)
 * to compare tuned tables with the shapes a profile saw.
 */
#include "variants/var.h"

#include <stdlib.h>
#include <string.h>

void var_csv_release(struct var_csv *c)
{
	for (size_t i = 0; i < c->n; i++) {
		for (size_t j = 0; j < c->rows[i].n; j++)
			free(c->rows[i].f[j].value);
		free(c->rows[i].f);
	}
	free(c->rows);
	c->rows = NULL;
	c->n = 0;
}

int var_csv_parse(const char *file, const char *d, size_t len, struct var_csv *c, struct rt_sb *err)
{
	size_t i = 0, cap = 0;
	int line = 1;
	c->rows = NULL;
	c->n = 0;
	while (i < len) {
		struct var_csv_row r = { .start = i, .line = line };
		for (;;) {
			struct var_csv_field f = { .start = i };
			struct rt_sb val = RT_SB_INIT;
			if (i < len && d[i] == '"') {
				f.quoted = true;
				i++;
				for (;;) {
					if (i >= len) {
						rt_sb_release(&val);
						for (size_t k = 0; k < r.n; k++)
							free(r.f[k].value);
						free(r.f);
						var_csv_release(c); /* and the rows before it */
						return rt_errf(err, RT_EPARSE, "%s:%d: unterminated quoted field",
							       file, r.line);
					}
					if (d[i] == '"') {
						if (i + 1 < len && d[i + 1] == '"') {
							rt_sb_addc(&val, '"');
							i += 2;
							continue;
						}
						i++;
						break;
					}
					if (d[i] == '\n')
						line++;
					rt_sb_addc(&val, d[i++]);
				}
				/* tolerate junk after the closing quote up to the separator */
				while (i < len && d[i] != ',' && d[i] != '\n' && d[i] != '\r')
					rt_sb_addc(&val, d[i++]);
			} else {
				while (i < len && d[i] != ',' && d[i] != '\n' && d[i] != '\r')
					rt_sb_addc(&val, d[i++]);
			}
			f.end = i;
			f.value = rt_sb_detach(&val, NULL);
			r.f = xrealloc(r.f, (r.n + 1) * sizeof(*r.f));
			r.f[r.n++] = f;
			if (i < len && d[i] == ',') {
				i++;
				continue;
			}
			break;
		}
		r.term = i;
		if (i < len && d[i] == '\r')
			i++;
		if (i < len && d[i] == '\n')
			i++;
		line++;
		r.end = i;
		if (c->n == cap) { /* doubling: a row at a time made a 100k-row table quadratic */
			cap = cap ? 2 * cap : 64;
			c->rows = xrealloc(c->rows, cap * sizeof(*c->rows));
		}
		c->rows[c->n++] = r;
	}
	return 0;
}

