/*
 * argv-like lists (rt_strv, rt_envv, NULL-terminated argv): the one release
 * function of each list type (see rt.h).
 */
#include <stdlib.h>

#include "runner/base/rt.h"

void rt_strv_release(struct rt_strv *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->v[i]);
	free(v->v);
	v->v = NULL;
	v->n = 0;
}

char *rt_strv_push(struct rt_strv *v, const char *s)
{
	v->v = xrealloc(v->v, (v->n + 2) * sizeof(*v->v));
	v->v[v->n] = xstrdup(s);
	v->v[v->n + 1] = NULL;
	return v->v[v->n++];
}

void rt_envv_release(struct rt_envv *e)
{
	for (size_t i = 0; i < e->n; i++) {
		free(e->v[i].name);
		free(e->v[i].value);
	}
	free(e->v);
	e->v = NULL;
	e->n = 0;
}

void rt_argv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}
