/*
 * Engine launches and their provenance, in the `launches` table (migration
 * 006): one row per engine started by a campaign.
 */
#ifndef DB_LAUNCHES_H
#define DB_LAUNCHES_H

#include "db/db.h"

/* One launch; every string owned (NULL when unknown). */
struct db_launch {
	int64_t id;             /* row id */
	int64_t campaign_id;    /* its campaign */
	int64_t iteration_id;   /* the iteration that started it */
	char *arm;              /* best | cand */
	int64_t pgid;           /* process group at launch */
	int port;               /* port it listened on */
	double ready_s;         /* start to ready, NAN when unknown */
	char *version;          /* self-reported version */
	char *exe_path;         /* argv[0] resolved on PATH */
	char *exe_sha256;       /* of the executable */
	char *image_ref;        /* docker/podman run: the image as written */
	char *image_digest;     /* its digest */
	char *repos;            /* JSON [{path, head, dirty}] */
	char *extra;            /* engine.provenance output */
	char *libs;             /* JSON {path: sha256} of the shared objects it mapped (version 16) */
	char *note;             /* what could not be recorded */
	char *differs;          /* how it differs from the campaign's first launch, NULL: same */
};

/* Insert l (its id, ignored, is set in *id when id is not NULL). RT_EDB. */
int db_launch_add(struct db *db, const struct db_launch *l, int64_t *id, struct rt_sb *err);
/* The campaign's first launch: 0, RT_ENOENT (none yet, nothing in err) or RT_EDB. */
int db_launch_first(struct db *db, int64_t campaign_id, struct db_launch *out, struct rt_sb *err);
/* The launches started by an iteration, oldest first; free with db_launches_free. */
int db_launches_of(struct db *db, int64_t iteration_id, struct db_launch **out, size_t *n,
		   struct rt_sb *err);
void db_launch_release(struct db_launch *l);
void db_launches_free(struct db_launch *v, size_t n);

#endif
