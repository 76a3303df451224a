/*
 * Typed option tables (see opt.h): parsing --name VALUE, --name=VALUE and
 * one-letter aliases, the unknown-option error with a did-you-mean, and
 * --help printed from the same table.
 */
#include "runner/base/opt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rt_opt_print_help(const struct rt_opt *opts, const struct rt_cmd_help *help)
{
	printf("usage: %s\n\n%s\n", help->usage, help->summary);
	if (opts && opts[0].type != RT_OPT_END)
		printf("\noptions:\n");
	for (const struct rt_opt *o = opts; o && o->type != RT_OPT_END; o++) {
		char left[64];
		if (o->hidden)
			continue;
		if (o->alias)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", o->alias, o->name,
				 o->arg ? " " : "", o->arg ? o->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", o->name, o->arg ? " " : "",
				 o->arg ? o->arg : "");
		printf("  %-28s %s\n", left, o->help);
	}
	printf("  %-28s %s\n", "-h, --help", "show this help");
	if (help->details)
		printf("\n%s\n", help->details);
}

static const struct rt_opt *find(const struct rt_opt *opts, const char *name, size_t len)
{
	for (const struct rt_opt *o = opts; o && o->type != RT_OPT_END; o++)
		if (strlen(o->name) == len && !strncmp(o->name, name, len))
			return o;
	return NULL;
}

static const struct rt_opt *find_alias(const struct rt_opt *opts, char c)
{
	for (const struct rt_opt *o = opts; o && o->type != RT_OPT_END; o++)
		if (o->alias == c)
			return o;
	return NULL;
}

static int set_value(const struct rt_opt *o, const char *v, struct rt_sb *err)
{
	char *end;
	switch (o->type) {
	case RT_OPT_STR:
		*(const char **)o->dst = v;
		return 0;
	case RT_OPT_INT:
		errno = 0;
		*(long *)o->dst = strtol(v, &end, 10);
		if (errno || end == v || *end)
			return rt_errf(err, RT_EUSAGE, "--%s: '%s' is not an integer", o->name, v);
		return 0;
	case RT_OPT_DBL:
		errno = 0;
		*(double *)o->dst = strtod(v, &end);
		if (errno || end == v || *end)
			return rt_errf(err, RT_EUSAGE, "--%s: '%s' is not a number", o->name, v);
		return 0;
	default:
		return 0;
	}
}

int rt_opt_parse(const struct rt_opt *opts, const struct rt_cmd_help *help,
		 int argc, char **argv, int *npos, struct rt_sb *err)
{
	int pos = 1;
	bool only_pos = false;
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		if (only_pos || a[0] != '-' || !a[1]) {
			argv[pos++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_pos = true;
			continue;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			rt_opt_print_help(opts, help);
			return 1;
		}
		const struct rt_opt *o;
		const char *val = NULL;
		if (a[1] == '-') {
			const char *name = a + 2;
			const char *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			o = find(opts, name, len);
			if (!o) {
				const char *cands[64];
				size_t n = 0;
				for (const struct rt_opt *p = opts; p && p->type != RT_OPT_END && n < 64; p++)
					if (!p->hidden)
						cands[n++] = p->name;
				char *word = xstrndup(name, len);
				const char *dym = rt_did_you_mean(word, cands, n);
				if (dym)
					rt_errf(err, 0, "unknown option '--%s' (did you mean '--%s'?)", word, dym);
				else
					rt_errf(err, 0, "unknown option '--%s'", word);
				free(word);
				return RT_EUSAGE;
			}
			if (eq) {
				if (o->type == RT_OPT_FLAG)
					return rt_errf(err, RT_EUSAGE, "--%s takes no value", o->name);
				val = eq + 1;
			}
		} else {
			o = a[2] ? NULL : find_alias(opts, a[1]);
			if (!o)
				return rt_errf(err, RT_EUSAGE, "unknown option '%s'", a);
		}
		if (o->type == RT_OPT_FLAG) {
			*(bool *)o->dst = true;
			continue;
		}
		if (!val) {
			if (i + 1 >= argc)
				return rt_errf(err, RT_EUSAGE, "--%s needs a value (%s)", o->name,
					       o->arg ? o->arg : "VALUE");
			val = argv[++i];
		}
		int rc = set_value(o, val, err);
		if (rc)
			return rc;
	}
	*npos = pos - 1;
	argv[pos] = NULL;
	return 0;
}
