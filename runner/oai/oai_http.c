/* One-shot HTTP GET with libcurl, for readiness and identity probes (see oai.h). */
#include "runner/oai/oai.h"

#include <curl/curl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

void oai_resp_init(struct oai_resp *r, size_t cap)
{
	r->status = 0;
	rt_sb_init(&r->body, cap);
	rt_sb_init(&r->headers, 65536);
}

void oai_resp_release(struct oai_resp *r)
{
	rt_sb_release(&r->body);
	rt_sb_release(&r->headers);
}

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
	struct rt_sb *sb = ud;
	rt_sb_add(sb, p, size * n); /* over the cap: dropped, the probe still works */
	return size * n;
}

/* A download's body must fit whole: over the cap, the transfer stops. */
static size_t on_data_whole(char *p, size_t size, size_t n, void *ud)
{
	struct rt_sb *sb = ud;
	return rt_sb_add(sb, p, size * n) ? 0 : size * n;
}

/* The one GET. A probe goes straight to the engine (no proxy, no
 * redirects) and keeps what fits; a download follows redirects, honours the
 * environment's proxy settings, and fails when the body is over the cap. */
static int get(const char *url, double timeout_s, bool download, const char *api_key,
	       struct oai_resp *r, struct rt_sb *err)
{
	oai_global_init();
	CURL *c = curl_easy_init();
	if (!c)
		return rt_errf(err, RT_EHTTP, "%s: cannot create a curl handle", url);
	rt_sb_reset(&r->body);
	rt_sb_reset(&r->headers);
	r->status = 0;
	char ebuf[CURL_ERROR_SIZE] = "";
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(timeout_s * 1000));
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)(timeout_s * 1000));
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, download ? on_data_whole : on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &r->body);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &r->headers);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, ebuf);
	if (download)
		curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	else
		curl_easy_setopt(c, CURLOPT_PROXY, "");
	struct curl_slist *hdrs = NULL;
	if (api_key && *api_key) {
		char *line = xasprintf("Authorization: Bearer %s", api_key);
		hdrs = curl_slist_append(NULL, line);
		memset(line, 0, strlen(line)); /* the key leaves no copy behind */
		free(line);
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	}
	CURLcode cc = curl_easy_perform(c);
	int rc = 0;
	if (cc != CURLE_OK)
		rc = rt_errf(err, RT_EHTTP, "GET %s: %s", url, ebuf[0] ? ebuf : curl_easy_strerror(cc));
	else
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	curl_easy_cleanup(c);
	for (struct curl_slist *h = hdrs; h; h = h->next)
		memset(h->data, 0, strlen(h->data));
	curl_slist_free_all(hdrs);
	return rc;
}

int oai_get(const char *url, double timeout_s, struct oai_resp *r, struct rt_sb *err)
{
	return get(url, timeout_s, false, NULL, r, err);
}

int oai_get_auth(const char *url, double timeout_s, const char *api_key, struct oai_resp *r,
		 struct rt_sb *err)
{
	return get(url, timeout_s, false, api_key, r, err);
}

int oai_download(const char *url, double timeout_s, struct oai_resp *r, struct rt_sb *err)
{
	return get(url, timeout_s, true, NULL, r, err);
}

int oai_resp_header(const struct oai_resp *r, const char *name, char *out, size_t n)
{
	size_t nl = strlen(name);
	const char *p = r->headers.buf;
	while (p && *p) {
		const char *eol = strstr(p, "\r\n");
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		if (len > nl && p[nl] == ':' && !strncasecmp(p, name, nl)) {
			const char *v = p + nl + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			size_t vl = len - (size_t)(v - p);
			if (vl >= n)
				vl = n - 1;
			memcpy(out, v, vl);
			out[vl] = 0;
			return 0;
		}
		p = eol ? eol + 2 : NULL;
	}
	return RT_ENOENT;
}
