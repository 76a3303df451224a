/*
 * A campaign's owner: one runner at a time. Two runners on one campaign
 * corrupt each other (duplicate baselines, an iteration both kept and
 * reverted, files that differ from a clean run), so a runner holds the
 * campaign's lease before it touches anything:
 *   - an advisory lock: an open-file-description lock (F_OFD_SETLK) on the
 *     byte at the campaign's id in the file `<database>.lock` beside the
 *     database. The kernel drops it when the runner dies, however it dies;
 *   - the lease in the database (db/leases.c): the holder's token, pid and
 *     host, and a heartbeat renewed every few seconds by a thread with its
 *     own connection, like Optuna's heartbeat. It names the holder in the
 *     refusal, and covers runners the lock cannot see (another host on a
 *     shared folder, a lock file removed).
 * A holder is live when it holds the lock; else, when it is on another
 * host, while its heartbeat is fresh; else (this host, the lock free) only
 * when its pid still runs ratchet, started at the time its token names (not
 * a reused pid), and its heartbeat is fresh. A lock file that cannot be
 * opened is an error, never a free campaign. A live holder
 * is refused by name; a dead one's lease is taken over.
 */
#ifndef RT_CAMPAIGN_LEASE_H
#define RT_CAMPAIGN_LEASE_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "db/db.h"

struct camp_lease {
	struct db *db;                      /* the runner's connection: take, check and drop */
	char *token;                        /* this runner's token: host, pid and start time */
	char host[256];                     /* this host's name */
	int lock_fd;                        /* `<database>.lock`, -1 when it cannot be opened */
	int lock_errno;                     /* why it could not be opened (then take and check fail) */
	int64_t cid;                        /* the campaign held, 0 while none */
	volatile sig_atomic_t *on_lost;     /* set to 1 when the lease is lost (stop the run) */
	atomic_bool lost;                   /* another runner took the lease over */
	pthread_t beat;                     /* the heartbeat thread */
	bool beating;                       /* it was started */
	pthread_mutex_t mu;                 /* guards stop */
	pthread_cond_t cv;                  /* wakes the heartbeat to stop */
	bool stop;                          /* the heartbeat must end */
};

/* Prepare (nothing held); on_lost is set when the heartbeat finds the lease
 * taken over. */
void camp_lease_init(struct camp_lease *l, struct db *db, volatile sig_atomic_t *on_lost);
/* Hold (or let go) the lock that makes "is a campaign of this spec running,
 * else create one" one step between runners; waits for it. RT_EIO when the
 * lock file cannot be opened (nothing is held then). */
int camp_lease_creating(struct camp_lease *l, bool hold, struct rt_sb *err);
/* RT_EBUSY, naming the holder, when a live runner holds campaign cid;
 * RT_EIO when the lock file cannot be opened. */
int camp_lease_check(struct camp_lease *l, int64_t cid, const char *name, struct rt_sb *err);
/* Take campaign cid's lease (a dead holder's is taken over) and start the
 * heartbeat; RT_EBUSY naming a live holder; RT_EIO when the lock file
 * cannot be opened; RT_EDB. */
int camp_lease_take(struct camp_lease *l, int64_t cid, const char *name, struct rt_sb *err);
/* The heartbeat found that another runner took the lease over: the pid and
 * host that hold it now go to err. */
bool camp_lease_lost(struct camp_lease *l, struct rt_sb *err);
/* Stop the heartbeat, give the lease back (if still ours), unlock. */
void camp_lease_release(struct camp_lease *l);

#endif
