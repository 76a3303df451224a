/* The one table that maps rt_err codes to messages. */
#include "runner/base/rt.h"

#include <stdio.h>

static const struct {
	int code;
	const char *msg;
} rt_errors[] = {
	{ RT_OK, "ok" },
	{ RT_EINVAL, "invalid input" },
	{ RT_ENOMEM, "out of memory" },
	{ RT_EIO, "input/output error" },
	{ RT_ENOENT, "not found" },
	{ RT_ETOOBIG, "size limit exceeded" },
	{ RT_ETIMEDOUT, "timed out" },
	{ RT_EPARSE, "parse error" },
	{ RT_EDB, "database error" },
	{ RT_ESCHEMA, "database written by a newer ratchet" },
	{ RT_EHTTP, "http error" },
	{ RT_EPROC, "child process failed" },
	{ RT_EIDENTITY, "endpoint is not the engine ratchet started" },
	{ RT_EBUSY, "already in use" },
	{ RT_ENOTBUILT, "not built" },
	{ RT_ENODEV, "no device" },
	{ RT_ECHECK, "correctness check failed" },
	{ RT_ESTATE, "not valid in this state" },
	{ RT_EINTR, "interrupted" },
	{ RT_ENOTSUP, "not supported" },
	{ RT_EUSAGE, "usage error" },
};

const char *rt_strerror(int err)
{
	for (size_t i = 0; i < RT_ARRAY_SIZE(rt_errors); i++)
		if (rt_errors[i].code == err)
			return rt_errors[i].msg;
	return "unknown error";
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
