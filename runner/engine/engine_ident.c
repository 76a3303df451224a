/*
 * The identity proof of a launched engine (see engine.h), without trusting
 * anything it says about itself:
 *   - the socket listening on the port (its inode, from /proc/net/tcp and
 *     tcp6) is one of the file descriptors of a process in the engine's
 *     process tree: a member of struct rt_ptree (its cgroup, or /proc with
 *     this process as their subreaper), or a process whose ancestry or
 *     process group leads to the leader;
 *   - GET identity_path (/v1/models) lists the expected served name;
 *   - the per-launch nonce, when the spec passes one, is echoed.
 * Then it asks for the engine's own version: vLLM GET /version
 * ({"version": "0.8.5"}, vllm/entrypoints/openai/api_server.py), llama.cpp's
 * llama-server GET /props ("build_info": "b5200-1234abcd", tools/server
 * README, b4000 and later), SGLang GET /get_server_info ("version", 0.4 and
 * later); the first that answers is kept.
 *
 * What this proves for containers: `docker run` / `podman run` start a
 * client whose container is a child of the container runtime
 * (containerd-shim, conmon), not of the client. The container's processes
 * live in their own PID namespace; from the host's /proc they are visible
 * with host pids, but their ancestry leads to the runtime, never to the
 * launched client, and with published ports (-p) the host socket is held by
 * docker-proxy (a child of dockerd) or by the runtime's port forwarder. So
 * for a container the port-owner proof cannot succeed: set
 * engine.identity.port_owner: false, and identity rests on the served model
 * name (put {nonce} in --served-model-name to make it per launch), the
 * self-reported version and the image digest recorded with the launch
 * (engine_prov.c). With `--network host --pid host` the processes are in the
 * host's namespaces but still descend from the runtime: the same holds.
 */
#define _GNU_SOURCE
#include "runner/engine/engine_int.h"
#include "runner/oai/oai.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Inodes of sockets listening on port (IPv4 and IPv6). */
static size_t listening_inodes(int port, unsigned long **out)
{
	size_t cap = 0;
	*out = NULL;
	static const char *const files[] = { "/proc/net/tcp", "/proc/net/tcp6" };
	size_t n = 0;
	for (size_t f = 0; f < RT_ARRAY_SIZE(files); f++) {
		FILE *fp = fopen(files[f], "r");
		if (!fp)
			continue;
		char line[512];
		if (!fgets(line, sizeof(line), fp)) { /* header */
			fclose(fp);
			continue;
		}
		while (fgets(line, sizeof(line), fp)) {
			char local[128], remote[128];
			unsigned st;
			unsigned long inode;
			/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
			if (sscanf(line, " %*s %127s %127s %x %*s %*s %*s %*s %*s %lu", local, remote, &st,
				   &inode) != 4)
				continue;
			const char *colon = strrchr(local, ':');
			if (!colon || st != 0x0A)
				continue;
			if ((int)strtol(colon + 1, NULL, 16) != port)
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 8;
				*out = xrealloc(*out, cap * sizeof(**out));
			}
			(*out)[n++] = inode;
		}
		fclose(fp);
	}
	return n;
}

/* Does pid hold one of the socket inodes? */
static bool pid_holds(pid_t pid, const unsigned long *inodes, size_t n)
{
	char dir[64];
	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	DIR *d = opendir(dir);
	if (!d)
		return false;
	bool found = false;
	struct dirent *de;
	while (!found && (de = readdir(d))) {
		char path[320], target[128];
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		ssize_t len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = 0;
		unsigned long ino;
		if (sscanf(target, "socket:[%lu]", &ino) == 1)
			for (size_t i = 0; i < n; i++)
				if (inodes[i] == ino)
					found = true;
	}
	closedir(d);
	return found;
}

/* Is pid a member of the engine's tree: recorded by the tree (same pid and
 * start time), or descended from the leader, or in its process group? */
static bool in_tree(struct run_engine *e, pid_t pid)
{
	struct rt_proc_stat ps;
	if (rt_proc_stat(pid, &ps))
		return false;
	pthread_mutex_lock(&e->tree_mu);
	rt_ptree_scan(&e->tree);
	bool member = false;
	for (size_t i = 0; i < e->tree.n && !member; i++)
		member = e->tree.m[i].pid == pid && e->tree.m[i].start == ps.start;
	pthread_mutex_unlock(&e->tree_mu);
	for (int depth = 0; !member && depth < 64 && pid > 1; depth++) {
		if (rt_proc_stat(pid, &ps))
			return false;
		member = pid == e->pid || ps.pgrp == e->pid;
		pid = ps.ppid;
	}
	return member;
}

/* Who holds a listening socket on port: its pid and short command, or 0.
 * With e, a holder in e's tree is preferred and *ours says whether one is. */
static pid_t socket_owner(int port, struct run_engine *e, bool *ours, char *comm, size_t commlen)
{
	unsigned long *inodes;
	size_t n = listening_inodes(port, &inodes);
	*ours = false;
	DIR *d = n ? opendir("/proc") : NULL;
	if (!d) {
		free(inodes);
		return 0;
	}
	pid_t owner = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		pid_t pid = (pid_t)atoi(de->d_name);
		if (pid <= 0 || !pid_holds(pid, inodes, n))
			continue;
		struct rt_proc_stat ps;
		if (!rt_proc_stat(pid, &ps))
			snprintf(comm, commlen, "%s", ps.comm);
		owner = pid;
		if (e && in_tree(e, pid)) {
			*ours = true;
			break;
		}
	}
	closedir(d);
	free(inodes);
	return owner;
}

pid_t eng_socket_owner(struct run_engine *e, int port, bool *ours, char *comm, size_t commlen)
{
	return socket_owner(port, e, ours, comm, commlen);
}

int run_engine_port_check(const char *host, int port, const char *probe_path, struct rt_sb *err)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return rt_errf(err, RT_EIO, "socket: %s", strerror(errno));
	struct sockaddr_in a = { 0 };
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int c = connect(fd, (struct sockaddr *)&a, sizeof(a));
	close(fd);
	bool dummy;
	char comm[64] = "";
	pid_t owner = socket_owner(port, NULL, &dummy, comm, sizeof(comm));
	if (c != 0 && !owner)
		return 0;
	rt_errf(err, RT_EBUSY, "port %d on %s is already in use", port, host);
	if (owner)
		rt_errf(err, 0, " by pid %d (%s)", (int)owner, comm);
	char *url = xasprintf("http://%s:%d%s", host, port, probe_path ? probe_path : "/");
	struct oai_resp r;
	oai_resp_init(&r, 4096);
	if (oai_get(url, 2, &r, NULL) == 0) {
		char snippet[121];
		size_t n = r.body.len < 120 ? r.body.len : 120;
		memcpy(snippet, r.body.buf, n);
		snippet[n] = 0;
		for (char *s = snippet; *s; s++)
			if (*s == '\n' || *s == '\r')
				*s = ' ';
		rt_errf(err, 0, "; GET %s answered %ld: %s", probe_path ? probe_path : "/", r.status, snippet);
	}
	oai_resp_release(&r);
	free(url);
	rt_errf(err, 0, "; refusing to start the engine, stop that server first");
	return RT_EBUSY;
}

/* The listening socket must belong to the engine's tree. */
static int check_port_owner(struct run_engine *e, struct rt_sb *err)
{
	bool ours;
	char comm[64] = "";
	pid_t owner = socket_owner(e->cfg.port, e, &ours, comm, sizeof(comm));
	if (!owner)
		return rt_errf(err, RT_EIDENTITY, "identity: nothing listens on port %d", e->cfg.port);
	if (!ours)
		return rt_errf(err, RT_EIDENTITY,
			       "identity: port %d is held by pid %d (%s), not by the engine (pid %d) or its children",
			       e->cfg.port, (int)owner, comm, (int)e->pid);
	return 0;
}

/* The nonce in the body or the X-Launch-Nonce header. */
static int check_nonce(struct run_engine *e, const struct oai_resp *r, const char *url, struct rt_sb *err)
{
	char hdr[256] = "";
	bool echoed = strstr(r->body.buf, e->cfg.nonce) != NULL;
	if (!echoed && oai_resp_header(r, "X-Launch-Nonce", hdr, sizeof(hdr)) == 0)
		echoed = !strcmp(hdr, e->cfg.nonce);
	if (!echoed)
		return rt_errf(err, RT_EIDENTITY, "identity: GET %s does not echo this launch's nonce %s", url,
			       e->cfg.nonce);
	return 0;
}

/* The expected served name among data[].id (the first one when none is
 * expected), kept in e->model. */
static int check_model(struct run_engine *e, const struct oai_resp *r, const char *url, struct rt_sb *err)
{
	json_error_t je;
	json_t *root = json_loadb(r->body.buf, r->body.len, 0, &je);
	json_t *data = root ? json_object_get(root, "data") : NULL;
	const char *found = NULL;
	struct rt_sb seen = RT_SB_INIT;
	size_t nseen = 0;
	for (size_t i = 0; json_is_array(data) && i < json_array_size(data) && !found; i++) {
		const char *id = json_string_value(json_object_get(json_array_get(data, i), "id"));
		if (!id)
			continue;
		rt_sb_addf(&seen, "%s'%s'", nseen++ ? ", " : "", id);
		if (!e->cfg.expected_model || !strcmp(id, e->cfg.expected_model))
			found = id;
	}
	int rc = 0;
	if (!nseen) {
		rc = rt_errf(err, RT_EIDENTITY, "identity: GET %s: no data[].id in the answer", url);
	} else if (!found && nseen == 1) {
		rc = rt_errf(err, RT_EIDENTITY, "identity: model is %s, expected '%s'", seen.buf,
			     e->cfg.expected_model);
	} else if (!found) {
		rc = rt_errf(err, RT_EIDENTITY, "identity: served models are %s, expected '%s'", seen.buf,
			     e->cfg.expected_model);
	} else {
		free(e->model);
		e->model = xstrdup(found);
	}
	rt_sb_release(&seen);
	json_decref(root);
	return rc;
}

int eng_check_port_owner(struct run_engine *e, struct rt_sb *err)
{
	return e->cfg.prove_owner || e->cfg.no_port_owner ? 0 : check_port_owner(e, err);
}

int run_engine_verify(struct run_engine *e, struct rt_sb *err)
{
	if (!run_engine_alive(e)) {
		/* who holds the port now, and the engine's last words (a
		 * bind failure says why it died) */
		bool ours;
		char comm[64] = "";
		pid_t owner = eng_socket_owner(e, e->cfg.port, &ours, comm, sizeof(comm));
		rt_errf(err, RT_EPROC, "engine %s", e->exit_text);
		if (owner && !ours)
			rt_errf(err, 0, "; port %d is now held by pid %d (%s), not by the engine", e->cfg.port,
				(int)owner, comm);
		eng_log_tail(e, 20, err);
		return RT_EPROC;
	}
	/* prove_owner: where /proc cannot see the engine (a Slurm step on
	 * another node), the executor proves it from the step's launch record */
	int rc = e->cfg.prove_owner ? e->cfg.prove_owner(e->cfg.prove_arg, err)
		 : e->cfg.no_port_owner ? 0 : check_port_owner(e, err);
	if (rc || (!e->cfg.identity_path && !e->cfg.nonce))
		return rc;
	char *url = xasprintf("%s%s", e->url, e->cfg.identity_path ? e->cfg.identity_path : "/v1/models");
	struct oai_resp r;
	oai_resp_init(&r, 1 << 20);
	if (oai_get(url, 10, &r, err))
		rc = RT_EIDENTITY;
	else if (r.status != 200)
		rc = rt_errf(err, RT_EIDENTITY, "identity: GET %s answered %ld", url, r.status);
	if (!rc && e->cfg.nonce)
		rc = check_nonce(e, &r, url, err);
	if (!rc && e->cfg.identity_path)
		rc = check_model(e, &r, url, err);
	oai_resp_release(&r);
	free(url);
	return rc;
}

/* Where each engine says its version, and under which key. */
static const struct {
	const char *path;   /* GET path */
	const char *engine; /* the engine that answers there */
	const char *key;    /* the JSON key of the version */
} version_probes[] = {
	{ "/version", "vllm", "version" },
	{ "/props", "llama-server", "build_info" },
	{ "/get_server_info", "sglang", "version" },
};

char *run_engine_version_parse(const char *path, const char *body, size_t len)
{
	for (size_t i = 0; i < RT_ARRAY_SIZE(version_probes); i++) {
		if (strcmp(path, version_probes[i].path))
			continue;
		json_error_t je;
		json_t *root = json_loadb(body, len, 0, &je);
		const char *v = json_string_value(json_object_get(root, version_probes[i].key));
		char *out = v && *v ? xasprintf("%s %s", version_probes[i].engine, v) : NULL;
		json_decref(root);
		return out;
	}
	return NULL;
}

const char *run_engine_fetch_version(struct run_engine *e)
{
	struct oai_resp r;
	oai_resp_init(&r, 1 << 20);
	for (size_t i = 0; i < RT_ARRAY_SIZE(version_probes) && !e->version; i++) {
		char *url = xasprintf("%s%s", e->url, version_probes[i].path);
		rt_sb_reset(&r.body);
		if (oai_get(url, 5, &r, NULL) == 0 && r.status == 200)
			e->version = run_engine_version_parse(version_probes[i].path, r.body.buf, r.body.len);
		free(url);
	}
	oai_resp_release(&r);
	return e->version;
}

const char *run_engine_version(const struct run_engine *e)
{
	return e->version;
}
