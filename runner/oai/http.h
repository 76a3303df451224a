/*
 * One-shot HTTP requests with libcurl's easy interface, for readiness and
 * identity probes. Bodies are capped (untrusted input). The load generator
 * and the gate use libcurl's multi interface in their own modules.
 */
#ifndef RT_HTTP_H
#define RT_HTTP_H

#include "runner/base/rt.h"

struct rt_http_resp {
	long status;          /* HTTP status, 0 when no response */
	struct rt_sb body;    /* response body, capped */
	struct rt_sb headers; /* raw response headers, capped */
};

void rt_http_resp_init(struct rt_http_resp *r, size_t cap);
void rt_http_resp_release(struct rt_http_resp *r);

/* GET url. Returns 0 when a response arrived (any status), RT_EHTTP when the
 * connection failed (err says why: "connection refused", ...). */
int rt_http_get(const char *url, double timeout_s, struct rt_http_resp *r, struct rt_sb *err);

/* Value of a response header (case-insensitive name) copied into out; 0 or RT_ENOENT. */
int rt_http_header(const struct rt_http_resp *r, const char *name, char *out, size_t n);

#endif
