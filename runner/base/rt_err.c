/*
 * Errors: rt_strerror() and rt_err_name(), both generated from the one list
 * RT_ERR_MAP in rt.h, and rt_errf(), which appends a message to an error
 * buffer and returns the code.
 */
#include "runner/base/rt.h"

#include <stdio.h>

static const struct {
	int code;         /* the rt_err value */
	const char *name; /* "RT_ENOENT" */
	const char *msg;  /* "not found" */
} rt_errors[] = {
#define RT_ERR_ROW(name, value, msg) { RT_##name, "RT_" #name, msg },
	RT_ERR_MAP(RT_ERR_ROW)
#undef RT_ERR_ROW
};

static int find(int err)
{
	for (size_t i = 0; i < RT_ARRAY_SIZE(rt_errors); i++)
		if (rt_errors[i].code == err)
			return (int)i;
	return -1;
}

const char *rt_strerror(int err)
{
	int i = find(err);
	return i < 0 ? "unknown error" : rt_errors[i].msg;
}

const char *rt_err_name(int err)
{
	int i = find(err);
	return i < 0 ? "RT_E?" : rt_errors[i].name;
}

int rt_errf(struct rt_sb *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		rt_sb_vaddf(err, fmt, ap);
		va_end(ap);
	}
	return code;
}
