/*
 * The journal (see campaign_int.h): before a file is written, its
 * pre-campaign bytes (first touch) and an intent holding the bytes before
 * and after are committed in one transaction; the write is atomic (temp,
 * fsync, rename); then the intent is closed. Recovery undoes open intents
 * and puts every touched file back to the best configuration's bytes, which
 * are derived from the kept iterations' intents, so nothing about the run
 * needs to be remembered outside the database. Each state of a file is its
 * bytes and its permission bits (0: unknown, rows before version 8), so a
 * file a change recreates or a patch chmods gets its mode back too. Stored
 * bytes are checked against their sha256 before any is written back.
 *
 * Every journal write goes through camp_jsys, a table of function pointers
 * (SQLite's aSyscall), so a test can make any one of them fail
 * (camp_jsys_fault_at, RATCHET_FAULT_JOURNAL) and check that the run stops
 * saying which, and that --resume recovers.
 */
#include "runner/campaign/campaign_int.h"

#include <errno.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/journal.h"
#include "runner/campaign/lease.h"

/* ---- the table of journal writes ---- */

static int sys_remove(const char *path, struct rt_sb *err)
{
	if (unlink(path) && errno != ENOENT)
		return rt_errf(err, RT_EIO, "%s: cannot remove: %s", path, strerror(errno));
	return 0;
}

/* The atomic write; a known mode is then set exactly (rt_write_file_atomic
 * keeps an existing file's mode and gives a new one 0644). */
static int sys_write(const char *path, const void *data, size_t len, int mode, struct rt_sb *err)
{
	int rc = rt_write_file_atomic(path, data, len, mode > 0 ? mode : 0644, err);
	if (!rc && mode > 0 && chmod(path, (mode_t)mode))
		rc = rt_errf(err, RT_EIO, "%s: cannot set mode %04o: %s", path, (unsigned)mode,
			     strerror(errno));
	return rc;
}

/* One initialiser for both: C (and clang 14) does not allow a global to be
 * initialised from another object, even a const one. */
#define JSYS_DEFAULT                                                                               \
	{                                                                                          \
		.original = db_original_record, .intent_open = db_intent_open,                     \
		.intent_close = db_intent_close, .intent_after = db_intent_set_after,              \
		.write = sys_write, .remove = sys_remove,                                          \
	}
static const struct camp_jsys jsys_default = JSYS_DEFAULT;

struct camp_jsys camp_jsys = JSYS_DEFAULT;

void camp_jsys_reset(void)
{
	camp_jsys = jsys_default;
}

/* The fault hook: every entry counted, the nth call fails. */
static long fault_n, fault_seen;
static struct camp_jsys fault_real; /* the table the hook wraps */

static int fault_hit(const char *what, const char *path, struct rt_sb *err)
{
	if (++fault_seen != fault_n)
		return 0;
	return rt_errf(err, RT_EIO, "journal write %ld (%s%s%s) failed: injected by RATCHET_FAULT_JOURNAL=%ld",
		       fault_seen, what, path ? " " : "", path ? path : "", fault_n);
}

static int fault_original(struct db *db, int64_t cid, const char *path, bool existed,
			  const void *content, size_t len, int mode, struct rt_sb *err)
{
	int rc = fault_hit("original", path, err);
	return rc ? rc : fault_real.original(db, cid, path, existed, content, len, mode, err);
}

static int fault_intent_open(struct db *db, int64_t iter, const char *action, const char *path,
			     bool bex, const void *b, size_t bl, int bm, bool aex, const void *a,
			     size_t al, int am, int64_t *id, struct rt_sb *err)
{
	int rc = fault_hit("intent-open", path, err);
	return rc ? rc
		  : fault_real.intent_open(db, iter, action, path, bex, b, bl, bm, aex, a, al, am, id,
					   err);
}

static int fault_intent_close(struct db *db, int64_t id, const char *state, struct rt_sb *err)
{
	char what[64];
	snprintf(what, sizeof(what), "intent-close %lld", (long long)id);
	int rc = fault_hit(what, NULL, err);
	return rc ? rc : fault_real.intent_close(db, id, state, err);
}

static int fault_intent_after(struct db *db, int64_t id, bool ex, const void *bytes, size_t len,
			      int mode, struct rt_sb *err)
{
	char what[64];
	snprintf(what, sizeof(what), "intent-after %lld", (long long)id);
	int rc = fault_hit(what, NULL, err);
	return rc ? rc : fault_real.intent_after(db, id, ex, bytes, len, mode, err);
}

static int fault_write(const char *path, const void *data, size_t len, int mode, struct rt_sb *err)
{
	int rc = fault_hit("write", path, err);
	return rc ? rc : fault_real.write(path, data, len, mode, err);
}

static int fault_remove(const char *path, struct rt_sb *err)
{
	int rc = fault_hit("remove", path, err);
	return rc ? rc : fault_real.remove(path, err);
}

void camp_jsys_fault_at(long n)
{
	if (fault_n)
		camp_jsys = fault_real; /* unwrap first */
	fault_n = n > 0 ? n : 0;
	fault_seen = 0;
	if (!fault_n)
		return;
	fault_real = camp_jsys;
	camp_jsys = (struct camp_jsys){
		.original = fault_original, .intent_open = fault_intent_open,
		.intent_close = fault_intent_close, .intent_after = fault_intent_after,
		.write = fault_write, .remove = fault_remove,
	};
}

/* ---- journaled writes ---- */

/* A file's permission bits, 0 when it does not exist. */
static int mode_of(const char *path)
{
	struct stat st;
	return stat(path, &st) ? 0 : (int)(st.st_mode & 07777);
}

/* Write bytes (with mode, 0: as rt_write_file_atomic) to path, or remove
 * it, through the table. */
static int put_bytes(const char *path, bool exists, const void *bytes, size_t len, int mode,
		     struct rt_sb *err)
{
	return exists ? camp_jsys.write(path, bytes, len, mode, err) : camp_jsys.remove(path, err);
}

/* Remove temp files a killed atomic write may have left next to path. */
static void sweep_temps(const char *path)
{
	char *pat = xasprintf("%s.ratchet-tmp.*", path);
	glob_t g;
	if (glob(pat, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			unlink(g.gl_pathv[i]);
		globfree(&g);
	}
	free(pat);
}

/* What a file holds: whether it exists, its bytes and its mode. */
struct fstate {
	bool exists;  /* the file exists (unreadable counts as absent) */
	char *bytes;  /* its bytes (owned), NULL when absent */
	size_t len;   /* bytes of bytes */
	int mode;     /* its permission bits, 0 when absent */
};

/* Whether path holds exactly the wanted bytes and mode (a mode of 0 is not
 * compared), or is absent as wanted; *cur gets what it holds (release
 * cur->bytes). */
static bool holds(const char *path, bool want_exists, const void *want, size_t want_len,
		  int want_mode, struct fstate *cur)
{
	/* Unreadable counts as absent: the move below then writes it. A failed
	 * read leaves bytes untouched, so start from none. */
	cur->bytes = NULL;
	cur->len = 0;
	cur->exists = rt_read_file(path, &cur->bytes, &cur->len, NULL) == 0;
	cur->mode = cur->exists ? mode_of(path) : 0;
	if (cur->exists != want_exists)
		return false;
	return !want_exists || (cur->len == want_len && !memcmp(cur->bytes, want, want_len) &&
				(!want_mode || cur->mode == want_mode));
}

/* The mode path has in the best configuration (the latest kept apply's, else
 * the original's); a path the campaign never touched has its own mode. */
static int best_mode(struct db *db, int64_t cid, const char *path)
{
	struct db_best b;
	struct rt_sb why = RT_SB_INIT;
	int rc = db_best_bytes(db, cid, path, &b, &why);
	int mode = rc == RT_ENOENT ? mode_of(path) : rc ? 0 : b.mode;
	if (!rc)
		db_best_release(&b);
	rt_sb_release(&why);
	return mode;
}

/* Original and intent of one file in one transaction. */
static int intent_begin(struct db *db, int64_t cid, int64_t iter, const struct var_file *f,
			const char *action, const struct fstate *cur, bool want_exists,
			const void *want, size_t want_len, int want_mode, int64_t *intent,
			struct rt_sb *err)
{
	int rc = db_begin(db, err);
	if (rc)
		return rc;
	/* first touch: the file still has its pre-campaign mode */
	rc = camp_jsys.original(db, cid, f->path, f->existed, f->before, f->before_len,
				mode_of(f->path), err);
	if (!rc)
		rc = camp_jsys.intent_open(db, iter, action, f->path, cur->exists, cur->bytes, cur->len,
					   cur->mode, want_exists, want, want_len, want_mode, intent, err);
	if (rc)
		db_rollback(db);
	else
		rc = db_commit(db, err);
	return rc;
}

int camp_journal_move(struct db *db, int64_t cid, int64_t iter, const struct var_plan *plan,
		      bool to_cand, size_t *moved, struct rt_sb *err)
{
	int rc = 0;
	*moved = 0;
	for (size_t i = 0; i < plan->n && !rc; i++) {
		const struct var_file *f = &plan->files[i];
		if (to_cand && !f->has_after)
			continue; /* patches: camp_journal_patch_open */
		bool want_exists = to_cand ? true : f->existed;
		const void *want = to_cand ? f->after : f->before;
		size_t want_len = to_cand ? f->after_len : f->before_len;
		/* a table or file change keeps the mode; back to the best is the best's mode */
		int want_mode = want_exists ? best_mode(db, cid, f->path) : 0;
		struct fstate cur = { 0 };
		int64_t intent = 0;
		if (!holds(f->path, want_exists, want, want_len, want_mode, &cur)) {
			rc = intent_begin(db, cid, iter, f, to_cand ? "apply" : "revert", &cur,
					  want_exists, want, want_len, want_mode, &intent, err);
			if (!rc)
				rc = put_bytes(f->path, want_exists, want, want_len, want_mode, err);
			if (!rc)
				rc = camp_jsys.intent_close(db, intent, "done", err);
			if (rc)
				rt_errf(err, 0, " (moving %s to the %s's bytes)", f->path,
					to_cand ? "candidate" : "best");
			else
				(*moved)++;
		}
		free(cur.bytes);
	}
	return rc;
}

int camp_journal_patch_open(struct db *db, int64_t cid, int64_t iter, const struct var_plan *plan,
			    int64_t *ids, struct rt_sb *err)
{
	int rc = db_begin(db, err);
	for (size_t i = 0; i < plan->n && !rc; i++) {
		const struct var_file *f = &plan->files[i];
		int mode = f->existed ? mode_of(f->path) : 0;
		rc = camp_jsys.original(db, cid, f->path, f->existed, f->before, f->before_len, mode, err);
		if (!rc)
			rc = camp_jsys.intent_open(db, iter, "apply", f->path, f->existed, f->before,
						   f->before_len, mode, false, NULL, 0, 0, &ids[i], err);
	}
	if (rc)
		db_rollback(db);
	else
		rc = db_commit(db, err);
	if (rc)
		rt_errf(err, 0, " (journaling the files of a patch)");
	return rc;
}

/* A patch that failed: its file back to the bytes and mode before it. */
static int patch_undo(struct db *db, const struct var_file *f, int64_t id, struct rt_sb *err)
{
	struct db_intent in;
	int rc = db_intent_get(db, id, &in, err);
	if (!rc)
		rc = put_bytes(f->path, f->existed, f->before, f->before_len, in.before_mode, err);
	db_intent_release(&in);
	if (!rc)
		rc = camp_jsys.intent_close(db, id, "undone", err);
	return rc;
}

int camp_journal_patch_close(struct db *db, const struct var_plan *plan, const int64_t *ids, bool ok,
			     struct rt_sb *err)
{
	int rc = 0;
	for (size_t i = 0; i < plan->n && !rc; i++) {
		const struct var_file *f = &plan->files[i];
		if (!ok) { /* git may have written some files */
			rc = patch_undo(db, f, ids[i], err);
			continue;
		}
		char *now = NULL;
		size_t len = 0;
		bool ex = rt_read_file(f->path, &now, &len, NULL) == 0; /* git may have removed it */
		rc = camp_jsys.intent_after(db, ids[i], ex, now, len, ex ? mode_of(f->path) : 0, err);
		if (!rc)
			rc = camp_jsys.intent_close(db, ids[i], "done", err);
		free(now);
	}
	if (rc)
		rt_errf(err, 0, " (journaling what the patch %s)", ok ? "wrote" : "left, to undo it");
	return rc;
}

int camp_journal_refill(struct db *db, int64_t cid, int64_t iter, const char *copy, const char *workdir,
			struct rt_sb *err)
{
	struct db_original *o = NULL;
	size_t n = 0, nc = strlen(copy);
	int rc = db_originals_list(db, cid, &o, &n, err);
	for (size_t i = 0; i < n && !rc; i++) {
		if (strncmp(o[i].path, copy, nc) || o[i].path[nc] != '/')
			continue;
		char *src = xasprintf("%s%s", workdir, o[i].path + nc);
		struct fstate want = { 0 }, cur = { 0 };
		want.exists = rt_read_file(src, &want.bytes, &want.len, NULL) == 0;
		want.mode = want.exists ? mode_of(src) : 0;
		int64_t intent = 0;
		if (!holds(o[i].path, want.exists, want.bytes, want.len, want.mode, &cur)) {
			rc = camp_jsys.intent_open(db, iter, "revert", o[i].path, cur.exists, cur.bytes, cur.len,
						   cur.mode, want.exists, want.bytes, want.len, want.mode, &intent,
						   err);
			if (!rc)
				rc = put_bytes(o[i].path, want.exists, want.bytes, want.len, want.mode, err);
			if (!rc)
				rc = camp_jsys.intent_close(db, intent, "done", err);
			if (rc)
				rt_errf(err, 0, " (refilling %s from %s)", o[i].path, src);
		}
		free(want.bytes);
		free(cur.bytes);
		free(src);
	}
	db_originals_free(o, n);
	return rc;
}

/* ---- recovery and restore ---- */

/* Stored bytes (what: which ones) still match the sha256 stored with them;
 * done: what a mismatch stops ("restored"). */
static int bytes_verify(const char *path, const char *what, bool exists, const void *p,
			size_t len, const char *sha, const char *done, struct rt_sb *err)
{
	char h[65];
	if (!exists)
		return 0;
	rt_sha256_hex(p ? p : "", len, h);
	if (!strcmp(h, sha))
		return 0;
	return rt_errf(err, RT_EDB,
		       "%s: the stored %s do not match their sha256 (%.12s, stored %.12s); "
		       "nothing was %s",
		       path, what, h, sha[0] ? sha : "none", done);
}

/* Before recovery writes anything: the bytes each open intent would put back
 * and the best configuration's bytes of each touched file are checked. */
static int recover_verify(struct db *db, int64_t campaign_id, struct rt_sb *err)
{
	static const char done[] = "written back (a damaged database: restore the files by hand)";
	struct db_intent *in = NULL;
	struct db_original *orig = NULL;
	size_t n = 0, no = 0;
	int rc = db_intents_open_list(db, campaign_id, &in, &n, err);
	for (size_t i = 0; i < n && !rc; i++)
		rc = bytes_verify(in[i].path, "bytes before the change", in[i].before_exists,
				  in[i].before, in[i].before_len, in[i].before_sha256, done, err);
	db_intents_free(in, n);
	if (!rc)
		rc = db_originals_list(db, campaign_id, &orig, &no, err);
	for (size_t i = 0; i < no && !rc; i++) {
		struct db_best b;
		if (!(rc = db_best_bytes(db, campaign_id, orig[i].path, &b, err))) {
			rc = bytes_verify(orig[i].path, "bytes of the best configuration", b.exists,
					  b.bytes, b.len, b.sha256, done, err);
			db_best_release(&b);
		}
	}
	db_originals_free(orig, no);
	return rc;
}

/* Undo open intents, newest first. */
static int undo_open_intents(struct db *db, int64_t campaign_id, int *undone, struct rt_sb *err)
{
	struct db_intent *in = NULL;
	size_t n = 0;
	int rc = db_intents_open_list(db, campaign_id, &in, &n, err);
	for (size_t i = n; i-- > 0 && !rc;) {
		sweep_temps(in[i].path);
		rc = put_bytes(in[i].path, in[i].before_exists, in[i].before, in[i].before_len,
			       in[i].before_mode, err);
		if (!rc)
			rc = camp_jsys.intent_close(db, in[i].id, "undone", err);
		if (rc)
			rt_errf(err, 0, " (undoing the half-applied change of %s)", in[i].path);
		else
			(*undone)++;
	}
	db_intents_free(in, n);
	return rc;
}

/* Every touched file back to the best configuration's bytes and mode. */
static int files_to_best(struct db *db, int64_t campaign_id, struct rt_sb *err)
{
	struct db_original *orig = NULL;
	size_t no = 0;
	int rc = db_originals_list(db, campaign_id, &orig, &no, err);
	for (size_t i = 0; i < no && !rc; i++) {
		struct db_best b;
		struct fstate cur = { 0 };
		sweep_temps(orig[i].path);
		rc = db_best_bytes(db, campaign_id, orig[i].path, &b, err);
		if (rc)
			break;
		if (!holds(orig[i].path, b.exists, b.bytes, b.len, b.mode, &cur) &&
		    (rc = put_bytes(orig[i].path, b.exists, b.bytes, b.len, b.mode, err)))
			rt_errf(err, 0, " (putting back the best configuration's bytes)");
		free(cur.bytes);
		db_best_release(&b);
	}
	db_originals_free(orig, no);
	return rc;
}

int run_campaign_recover(struct db *db, int64_t campaign_id, int *undone, int *interrupted,
			 struct rt_sb *err)
{
	*undone = 0;
	*interrupted = 0;
	int rc = recover_verify(db, campaign_id, err);
	if (!rc)
		rc = undo_open_intents(db, campaign_id, undone, err);
	if (rc)
		return rc;
	rc = db_iterations_interrupt(db, campaign_id, "interrupted: the runner stopped mid-iteration", err);
	if (rc < 0)
		return rc;
	*interrupted = rc;
	return files_to_best(db, campaign_id, err);
}

/* Whether every stored original still has the sha256 recorded with it: a
 * damaged row is refused before any file is written. */
static int originals_verify(const struct db_original *orig, size_t n, struct rt_sb *err)
{
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++)
		rc = bytes_verify(orig[i].path, "original bytes", orig[i].existed, orig[i].content,
				  orig[i].len, orig[i].sha256, "restored", err);
	return rc;
}

/* The campaign's files back to their pre-campaign bytes and modes, under
 * its lease (so no runner starts meanwhile). */
static int restore_files(struct db *db, const struct db_campaign *cp, int *n, struct rt_sb *err)
{
	struct db_original *orig = NULL;
	size_t no = 0;
	int undone, interrupted;
	int rc = db_originals_list(db, cp->id, &orig, &no, err);
	if (!rc)
		rc = originals_verify(orig, no, err);
	if (!rc)
		rc = run_campaign_recover(db, cp->id, &undone, &interrupted, err);
	for (size_t i = 0; i < no && !rc; i++) {
		rc = put_bytes(orig[i].path, orig[i].existed, orig[i].content, orig[i].len, orig[i].mode,
			       err);
		if (rc)
			rt_errf(err, 0, " (putting back the pre-campaign bytes)");
		else
			(*n)++;
	}
	db_originals_free(orig, no);
	if (!rc && strcmp(cp->state, "finished"))
		rc = db_campaign_set_state(db, cp->id, "aborted", err);
	return rc;
}

int run_campaign_restore(struct db *db, int64_t id, int *n, struct rt_sb *err)
{
	*n = 0;
	struct db_campaign cp;
	memset(&cp, 0, sizeof(cp));
	int rc = id ? db_campaign_get(db, id, &cp, err) : db_campaign_latest(db, NULL, &cp, err);
	if (rc)
		return rc;
	/* A live runner's files are not pulled from under it: its lease refuses
	 * us, naming its pid and host; a dead runner's lease is taken over. */
	struct camp_lease lease;
	camp_lease_init(&lease, db, NULL);
	rc = camp_lease_take(&lease, cp.id, cp.name, err);
	if (!rc)
		rc = restore_files(db, &cp, n, err);
	camp_lease_release(&lease);
	db_campaign_release(&cp);
	return rc;
}
