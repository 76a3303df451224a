/*
 * A campaign's owner (see lease.h): the advisory lock beside the database,
 * the lease in it, the heartbeat thread, and the rule that tells a live
 * holder from a dead one.
 */
#define _GNU_SOURCE
#include "runner/campaign/lease.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runner/base/proc.h"

/* The heartbeat's period, and how old a heartbeat may be before its holder
 * counts as dead when the lock cannot tell (another host). */
#define HEARTBEAT_S 5
#define STALE_S 30

/* Byte 0 of the lock file serialises creating campaigns; byte id, campaign id's lease. */
#define CREATE_BYTE 0

void camp_lease_init(struct camp_lease *l, struct db *db, volatile sig_atomic_t *on_lost)
{
	memset(l, 0, sizeof(*l));
	l->db = db;
	l->on_lost = on_lost;
	atomic_init(&l->lost, false);
	if (gethostname(l->host, sizeof(l->host) - 1))
		snprintf(l->host, sizeof(l->host), "localhost");
	struct rt_proc_stat ps;
	l->token = xasprintf("%s/%d/%llu", l->host, (int)getpid(),
			     rt_proc_stat(getpid(), &ps) ? (unsigned long long)rt_wall_ms() : ps.start);
	char *path = xasprintf("%s.lock", db_path(db));
	l->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	l->lock_errno = l->lock_fd < 0 ? errno : 0;
	free(path);
	pthread_mutex_init(&l->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->cv, &ca);
	pthread_condattr_destroy(&ca);
}

/* Lock (F_WRLCK) or unlock (F_UNLCK) one byte; wait or not. 0, or -1 with
 * errno (EAGAIN: another runner holds it; EBADF: no lock file, which the
 * callers refuse first through no_lock_file). */
static int lock_byte(struct camp_lease *l, int64_t at, short type, bool wait)
{
	if (l->lock_fd < 0) {
		errno = EBADF;
		return -1;
	}
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = (off_t)at, .l_len = 1 };
	int rc;
	do
		rc = fcntl(l->lock_fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl);
	while (rc && errno == EINTR);
	return rc;
}


/* A lock file that could not be opened (a directory, another user's file,
 * a read-only folder) locks nothing: two runners would both see the
 * campaign free. That is an error, never a quiet success (issue 22, 12). */
static int no_lock_file(const struct camp_lease *l, struct rt_sb *err)
{
	if (l->lock_fd >= 0)
		return 0;
	return rt_errf(err, RT_EIO,
		       "%s.lock: cannot open the campaign lock file: %s; one runner per campaign cannot be "
		       "ensured without it: make it a writable regular file (or remove it)",
		       db_path(l->db), strerror(l->lock_errno));
}

int camp_lease_creating(struct camp_lease *l, bool hold, struct rt_sb *err)
{
	int rc = no_lock_file(l, err);
	if (!rc)
		lock_byte(l, CREATE_BYTE, hold ? F_WRLCK : F_UNLCK, true);
	return rc;
}

/* The start time a lease token names (its last '/' field), 0 when none. */
static unsigned long long token_start(const char *token)
{
	const char *slash = token ? strrchr(token, '/') : NULL;
	return slash ? strtoull(slash + 1, NULL, 10) : 0;
}

/* Does pid run this program (ratchet) now, and is it the very process that
 * took the lease (its start time, when the token names one, is the same: a
 * pid reused by another ratchet is not the holder; issue 22, 20)? */
static bool runs_holder(int64_t pid, const char *token)
{
	struct rt_proc_stat them, us;
	if (pid <= 0 || rt_proc_stat((pid_t)pid, &them) || them.state == 'Z' ||
	    rt_proc_stat(getpid(), &us) || strcmp(them.comm, us.comm))
		return false;
	unsigned long long start = token_start(token);
	return !start || start == them.start;
}

/* Is the lease h held by a live runner? locked: another runner holds the
 * campaign's lock right now. */
static bool holder_live(const struct camp_lease *l, const struct db_lease *h, bool locked)
{
	if (!h->token)
		return false;
	if (locked)
		return true;
	bool fresh = rt_wall_ms() - h->heartbeat_at < STALE_S * 1000;
	if (!h->host || strcmp(h->host, l->host))
		return fresh; /* another host: its heartbeat is all there is to see */
	/* This host with the lock free: the holder died, unless its lock file
	 * was replaced or it reached the database by another path. */
	return fresh && runs_holder(h->pid, h->token);
}

/* The refusal: who runs it, and what to do that is not a second runner. */
static int refuse(const struct camp_lease *l, int64_t cid, const char *name, const struct db_lease *h,
		  struct rt_sb *err)
{
	int64_t now = rt_wall_ms();
	const char *host = h->host ? h->host : "?";
	char stop[320];
	if (strcmp(host, l->host))
		snprintf(stop, sizeof(stop), "kill %lld on %s", (long long)h->pid, host);
	else
		snprintf(stop, sizeof(stop), "kill %lld", (long long)h->pid);
	rt_errf(err, RT_EBUSY,
		"campaign %lld '%s' in %s is being run by pid %lld on host %s (for %llds, last heartbeat "
		"%llds ago); a campaign has one runner at a time: wait for that runner to finish, or "
		"stop it (%s) first",
		(long long)cid, name, db_path(l->db), (long long)h->pid, host,
		(long long)((now - h->since) / 1000), (long long)((now - h->heartbeat_at) / 1000), stop);
	return RT_EBUSY;
}

/* Read campaign cid's lease and judge it: *live, and whether we now hold
 * the campaign's lock (*locked_here; the caller unlocks it if it does not
 * take the lease). */
static int judge(struct camp_lease *l, int64_t cid, struct db_lease *h, bool *live, bool *locked_here,
		 struct rt_sb *err)
{
	*locked_here = false;
	int rc = no_lock_file(l, err);
	if (rc)
		return rc;
	*locked_here = lock_byte(l, cid, F_WRLCK, false) == 0;
	bool locked_by_other = !*locked_here;
	rc = db_lease_get(l->db, cid, h, err);
	*live = !rc && holder_live(l, h, locked_by_other);
	return rc;
}

int camp_lease_check(struct camp_lease *l, int64_t cid, const char *name, struct rt_sb *err)
{
	struct db_lease h;
	bool live, locked;
	int rc = judge(l, cid, &h, &live, &locked, err);
	if (locked && cid != l->cid)
		lock_byte(l, cid, F_UNLCK, false);
	if (!rc && live)
		rc = refuse(l, cid, name, &h, err);
	db_lease_release(&h);
	return rc;
}

static void *beat_main(void *arg)
{
	struct camp_lease *l = arg;
	struct db *db = NULL;
	struct rt_sb err = RT_SB_INIT;
	pthread_mutex_lock(&l->mu);
	while (!l->stop) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += HEARTBEAT_S;
		pthread_cond_timedwait(&l->cv, &l->mu, &ts);
		if (l->stop)
			break;
		pthread_mutex_unlock(&l->mu);
		/* Its own connection: the runner's is not shared between threads.
		 * A failed beat is tried again at the next period; only a lease
		 * that another runner holds now stops the run. */
		if (!db && db_open(db_path(l->db), &db, &err))
			db = NULL;
		if (db && db_lease_renew(db, l->cid, l->token, &err) == RT_ENOENT) {
			atomic_store(&l->lost, true);
			if (l->on_lost)
				*l->on_lost = 1;
		}
		rt_sb_reset(&err);
		pthread_mutex_lock(&l->mu);
	}
	pthread_mutex_unlock(&l->mu);
	db_close(db);
	rt_sb_release(&err);
	return NULL;
}

int camp_lease_take(struct camp_lease *l, int64_t cid, const char *name, struct rt_sb *err)
{
	struct db_lease h = { 0 };
	bool live, locked = false;
	int rc = db_begin(l->db, err); /* the read and the take: one step between runners */
	if (!rc)
		rc = judge(l, cid, &h, &live, &locked, err);
	if (!rc && live)
		rc = refuse(l, cid, name, &h, err);
	if (!rc)
		rc = db_lease_take(l->db, cid, h.token, l->token, (int64_t)getpid(), l->host, err);
	if (!rc)
		rc = db_commit(l->db, err);
	else
		db_rollback(l->db);
	db_lease_release(&h);
	if (rc) {
		if (locked)
			lock_byte(l, cid, F_UNLCK, false);
		return rc;
	}
	l->cid = cid;
	l->stop = false;
	l->beating = pthread_create(&l->beat, NULL, beat_main, l) == 0;
	return 0;
}

bool camp_lease_lost(struct camp_lease *l, struct rt_sb *err)
{
	if (!atomic_load(&l->lost))
		return false;
	struct db_lease h;
	struct rt_sb why = RT_SB_INIT;
	if (db_lease_get(l->db, l->cid, &h, &why) == 0 && h.token)
		rt_errf(err, RT_EBUSY, "campaign %lld was taken over by pid %lld on host %s "
			"(this runner's heartbeat went stale); this runner stopped", (long long)l->cid,
			(long long)h.pid, h.host ? h.host : "?");
	else
		rt_errf(err, RT_EBUSY, "campaign %lld: this runner lost its lease; it stopped",
			(long long)l->cid);
	db_lease_release(&h);
	rt_sb_release(&why);
	return true;
}

void camp_lease_release(struct camp_lease *l)
{
	if (l->beating) {
		pthread_mutex_lock(&l->mu);
		l->stop = true;
		pthread_cond_signal(&l->cv);
		pthread_mutex_unlock(&l->mu);
		pthread_join(l->beat, NULL);
		l->beating = false;
	}
	if (l->cid && !atomic_load(&l->lost)) {
		struct rt_sb why = RT_SB_INIT;
		db_lease_drop(l->db, l->cid, l->token, &why); /* a dead runner's lease is taken over anyway */
		rt_sb_release(&why);
	}
	if (l->lock_fd >= 0)
		close(l->lock_fd); /* every lock of this runner with it */
	pthread_cond_destroy(&l->cv);
	pthread_mutex_destroy(&l->mu);
	free(l->token);
	memset(l, 0, sizeof(*l));
	l->lock_fd = -1;
}
