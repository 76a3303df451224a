/*
 * A device pool's worker (the other half of round.c). The runner starts
 * one worker process per device for each round: a fresh `ratchet run
 * --pool-worker CID/SEQ/FIRST/ROUND/DEVICE/WHAT SPEC` (exec, not a bare fork: no
 * device runtime, SQLite connection or thread of the runner is inherited).
 * A worker:
 *   - pins its device before anything else initialises a runtime, in its
 *     own environment, which its engine, benchmarks and builds inherit:
 *     cuda CUDA_VISIBLE_DEVICES=N; hip ROCR_VISIBLE_DEVICES=N and
 *     HIP_VISIBLE_DEVICES=0 (HIP indexes the devices ROCr exposes: ROCm's
 *     "GPU isolation techniques", ROCm 6.1); ze ZE_AFFINITY_MASK=N (Level
 *     Zero spec 1.9, "Affinity Mask"); every kind RATCHET_DEVICE=KIND:N.
 *     Its in-process kernel benchmarks run on device 0 of what it sees:
 *     the pinned one;
 *   - opens its own SQLite connection (WAL, busy timeout: db/open.c), and
 *     rebuilds the best configuration from the store as the runner did;
 *   - decides with the noise of the iterations before FIRST, its round's
 *     first seq, as its prior: what was recorded before the round started,
 *     never what a sibling of the round recorded meanwhile;
 *   - runs its one iteration (or the baseline) from plan to record, both
 *     arms on its device, its engine on a port of its own (picked free,
 *     the spec's engine.port is refused for a pool), and records the
 *     iteration's round and device;
 *   - checks its device's identity per sample against the first one it
 *     recorded for that device (fact device@KIND:N).
 * Workers never take the campaign's lease: the runner holds it for them.
 * A worker dies with the runner (PR_SET_PDEATHSIG), so a kill -9 of the
 * runner leaves no worker measuring; `--resume` stops their engines by the
 * process groups they recorded.
 *
 * The working copies: camp_copy_sync fills a worker's folder from the
 * workdir before a round whose trials touch files; the files of it that the
 * journal has touched are first brought to the workdir's bytes through the
 * journal (camp_journal_refill), so a copy always matches its intents.
 */
#include "runner/campaign/campaign_int.h"
#include "runner/campaign/exec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- working copies ---- */

/* Remove path and everything under it (links are removed, never followed). */
static int rm_tree(const char *path, struct rt_sb *err)
{
	struct stat st;
	if (lstat(path, &st))
		return errno == ENOENT ? 0 : rt_errf(err, RT_EIO, "%s: %s", path, strerror(errno));
	DIR *d = S_ISDIR(st.st_mode) ? opendir(path) : NULL;
	int rc = 0;
	struct dirent *e;
	while (d && !rc && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char *sub = xasprintf("%s/%s", path, e->d_name);
		rc = rm_tree(sub, err);
		free(sub);
	}
	if (d)
		closedir(d);
	if (!rc && remove(path) && errno != ENOENT)
		rc = rt_errf(err, RT_EIO, "remove %s: %s", path, strerror(errno));
	return rc;
}

/* Is path one of the database's files (DB, DB-wal, DB.lock, DB.pool/...)? */
static bool db_file(const char *path, const char *db)
{
	return !strncmp(path, db, strlen(db));
}

/* Copy one regular file. Every failure names its own errno: a write that
 * stops short (a full disk) is ENOSPC, never a stale errno from before
 * (issue 22, item 22). */
static int copy_file(const char *from, const char *to, mode_t mode, struct rt_sb *err)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return rt_errf(err, RT_EIO, "copy %s: cannot read it: %s", from, strerror(errno));
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode & 07777);
	if (out < 0) {
		int e = errno;
		close(in);
		return rt_errf(err, RT_EIO, "copy %s to %s: cannot create it: %s", from, to, strerror(e));
	}
	char buf[65536];
	int e = 0;
	const char *what = "read";
	for (;;) {
		ssize_t r = read(in, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			e = r < 0 ? errno : 0;
			break;
		}
		for (ssize_t done = 0; done < r && !e;) {
			ssize_t w = write(out, buf + done, (size_t)(r - done));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				e = w < 0 ? errno : ENOSPC;
			else
				done += w;
		}
		if (e) {
			what = "write";
			break;
		}
	}
	close(in);
	if (close(out) && !e) {
		e = errno;
		what = "write";
	}
	return e ? rt_errf(err, RT_EIO, "copy %s to %s: %s failed: %s", from, to, what, strerror(e)) : 0;
}

/* Where a working copy's walk is: the database's files are left out, and a
 * link into the workdir is pointed at the same file of the copy. */
struct copy_walk {
	const char *db;      /* the database's real path (its files are not copied) */
	const char *workdir; /* the workdir's real path */
	const char *copy;    /* the working copy's folder */
};

/* Is path the folder dir or under it? */
static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

/* The target a copied link gets (owned): a link that reaches into the
 * workdir (an absolute one, or a relative one through an outside folder)
 * would have every worker's copy share that one file (issue 22, item 11),
 * so it is pointed at the same path inside the copy; other links are kept. */
static char *link_target(const struct copy_walk *k, const char *src, const char *target)
{
	char *real = realpath(src, NULL);
	const char *in = real && under(real, k->workdir) ? real
			 : target[0] == '/' && under(target, k->workdir) ? target : NULL;
	char *out = in ? xasprintf("%s%s", k->copy, in + strlen(k->workdir)) : xstrdup(target);
	free(real);
	return out;
}

static int copy_tree(const struct copy_walk *k, const char *from, const char *to, struct rt_sb *err)
{
	DIR *d = opendir(from);
	if (!d)
		return rt_errf(err, RT_EIO, "read folder %s: %s", from, strerror(errno));
	int rc = 0;
	struct dirent *e;
	while (!rc && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char *src = xasprintf("%s/%s", from, e->d_name), *dst = xasprintf("%s/%s", to, e->d_name);
		struct stat st;
		if (db_file(src, k->db) || lstat(src, &st)) {
			/* the store's files stay where they are */
		} else if (S_ISDIR(st.st_mode)) {
			if (mkdir(dst, st.st_mode & 07777) && errno != EEXIST)
				rc = rt_errf(err, RT_EIO, "make folder %s: %s", dst, strerror(errno));
			else
				rc = copy_tree(k, src, dst, err);
		} else if (S_ISLNK(st.st_mode)) {
			char target[4096];
			ssize_t n = readlink(src, target, sizeof(target) - 1);
			if (n < 0) {
				rc = rt_errf(err, RT_EIO, "copy link %s: %s", src, strerror(errno));
			} else {
				target[n] = 0;
				char *to_target = link_target(k, src, target);
				if (symlink(to_target, dst))
					rc = rt_errf(err, RT_EIO, "copy link %s to %s: %s", src, dst, strerror(errno));
				free(to_target);
			}
		} else if (S_ISREG(st.st_mode)) {
			rc = copy_file(src, dst, st.st_mode, err);
		}
		free(src);
		free(dst);
	}
	closedir(d);
	return rc;
}

int camp_copy_sync(const struct camp *c, const char *dir, struct rt_sb *err)
{
	char *db = realpath(db_path(c->db), NULL);
	char *wd = db ? realpath(c->s->workdir, NULL) : NULL;
	int rc = !db ? rt_errf(err, RT_EIO, "%s: %s", db_path(c->db), strerror(errno))
		 : !wd ? rt_errf(err, RT_EIO, "%s: %s", c->s->workdir, strerror(errno)) : 0;
	/* The refill's intents belong to the newest iteration recorded (the
	 * round's own are not created yet); none before the baseline. */
	struct db_iteration last;
	memset(&last, 0, sizeof(last));
	struct rt_sb why = RT_SB_INIT;
	if (!rc && c->seq > 0 && !db_iteration_get_seq(c->db, c->cid, c->seq - 1, &last, &why))
		rc = camp_journal_refill(c->db, c->cid, last.id, dir, wd, err);
	db_iteration_release(&last);
	rt_sb_release(&why);
	if (!rc)
		rc = rm_tree(dir, err);
	if (!rc)
		rc = rt_mkdirs(dir, err);
	if (!rc) {
		struct copy_walk k = { .db = db, .workdir = wd, .copy = dir };
		rc = copy_tree(&k, wd, dir, err);
	}
	free(wd);
	free(db);
	return rc;
}

/* ---- the worker ---- */

/* CID/SEQ/FIRST/ROUND/KIND:N/WHAT, WHAT "baseline", VARIANT,ROLE,FIDELITY or
 * (a generated change: a space point, or an llm answer whose CODE is its
 * exchange's id) p:TARGET:CODE,ROLE,FIDELITY. */
struct worker_arg {
	long long cid;                /* the campaign */
	int seq;                      /* the iteration's seq */
	int first;                    /* the first seq of its round (the prior's end) */
	int round;                    /* its round */
	struct spec_device dev;       /* the device */
	char dev_name[32];            /* "cuda:1" */
	bool baseline;                /* the baseline, not a proposal */
	struct agent_proposal p;      /* the proposal otherwise */
};

static int parse_arg(const char *a, struct worker_arg *w, struct rt_sb *err)
{
	char dev[64], what[200];
	memset(w, 0, sizeof(*w));
	if (sscanf(a, "%lld/%d/%d/%d/%63[^/]/%199s", &w->cid, &w->seq, &w->first, &w->round, dev, what) != 6 ||
	    w->first < 0 || w->first > w->seq || spec_device_parse(dev, &w->dev, err))
		return rt_errf(err, RT_EUSAGE, "--pool-worker '%s': expected CID/SEQ/FIRST/ROUND/KIND:N/WHAT", a);
	spec_device_name(&w->dev, w->dev_name, sizeof(w->dev_name));
	if (!strcmp(what, "baseline")) {
		w->baseline = true;
		return 0;
	}
	char role[16];
	size_t v, t;
	unsigned long long code;
	double f;
	if (sscanf(what, "p:%zu:%llu,%15[a-z],%lf", &t, &code, role, &f) == 4 &&
	    !db_iter_role_parse(role, &w->p.role)) {
		w->p.point = true;
		w->p.target = t;
		w->p.code = (uint64_t)code;
		w->p.fidelity = f;
		return 0;
	}
	if (sscanf(what, "%zu,%15[a-z],%lf", &v, role, &f) != 3 || db_iter_role_parse(role, &w->p.role))
		return rt_errf(err, RT_EUSAGE, "--pool-worker '%s': expected VARIANT,ROLE,FIDELITY or "
			       "p:TARGET:CODE,ROLE,FIDELITY", what);
	w->p.variant = v;
	w->p.fidelity = f;
	return 0;
}

/* The device's pinning variables, in this process: everything it starts inherits them. */
static void pin(const struct worker_arg *w)
{
	char n[16];
	snprintf(n, sizeof(n), "%d", w->dev.index);
	switch (w->dev.kind) {
	case SPEC_DEV_CUDA:
		setenv("CUDA_VISIBLE_DEVICES", n, 1);
		break;
	case SPEC_DEV_HIP:
		setenv("ROCR_VISIBLE_DEVICES", n, 1);
		setenv("HIP_VISIBLE_DEVICES", "0", 1);
		break;
	case SPEC_DEV_ZE:
		setenv("ZE_AFFINITY_MASK", n, 1);
		break;
	case SPEC_DEV_HOST:
		break;
	}
	setenv("RATCHET_DEVICE", w->dev_name, 1);
}

int camp_worker_run(struct camp *c, struct run_campaign_result *res, struct rt_sb *err)
{
	struct worker_arg w;
	int rc = parse_arg(c->o->worker, &w, err);
	if (rc)
		return rc;
	pin(&w);
	/* This process's own spec, loaded for it alone: its kernels run on the
	 * one device it sees. */
	struct spec *s = (struct spec *)c->s;
	for (size_t b = 0; b < s->n_benches; b++)
		s->benches[b].kernel.device = 0;
	c->cid = w.cid;
	c->worker.device = w.dev_name;
	c->worker.device_fact = xasprintf("device@%s", w.dev_name);
	c->worker.round = w.round;
	c->prior.before = w.first;
	res->campaign_id = c->cid;
	bool have_baseline;
	if ((rc = camp_rebuild_best(c, &have_baseline, err)))
		return rc;
	c->seq = w.seq;
	rep_progress_init(&c->prog, c->o->out, false, true, 0);
	if ((rc = camp_exec_open(c, err)))
		return rc;
	/* The change the runner proposed, made from this worker's own spec
	 * and the store (a generated point or answer: propose.c). */
	if (!w.baseline && (rc = camp_proposer_of(s)->make(c, &w.p, &c->gen, err)))
		return rc;
	/* The strategy's note and state, handed over by the runner (round.c). */
	const char *note = getenv("RATCHET_POOL_NOTE"), *state = getenv("RATCHET_POOL_STATE");
	snprintf(w.p.note, sizeof(w.p.note), "%s", note ? note : "");
	snprintf(w.p.state, sizeof(w.p.state), "%s", state && *state ? state : "{}");
	unsetenv("RATCHET_POOL_NOTE");
	unsetenv("RATCHET_POOL_STATE");
	rc = w.baseline ? camp_run_baseline(c, err) : camp_run_one(c, &w.p, err);
	camp_gen_free(c->gen);
	c->gen = NULL;
	res->iterations = 1;
	return rc;
}
