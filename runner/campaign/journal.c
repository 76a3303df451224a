/*
 * The journal (see campaign_int.h): before a file is written, its
 * pre-campaign bytes (first touch) and an intent holding the bytes before
 * and after are committed in one transaction; the write is atomic (temp,
 * fsync, rename); then the intent is closed. Recovery undoes open intents
 * and puts every touched file back to the best configuration's bytes, which
 * are derived from the kept iterations' intents, so nothing about the run
 * needs to be remembered outside the database.
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
#include <unistd.h>

#include "db/journal.h"

/* ---- the table of journal writes ---- */

static int sys_remove(const char *path, struct rt_sb *err)
{
	if (unlink(path) && errno != ENOENT)
		return rt_errf(err, RT_EIO, "%s: cannot remove: %s", path, strerror(errno));
	return 0;
}

static const struct camp_jsys jsys_default = {
	.original = db_original_record,
	.intent_open = db_intent_open,
	.intent_close = db_intent_close,
	.intent_after = db_intent_set_after,
	.write = rt_write_file_atomic,
	.remove = sys_remove,
};

struct camp_jsys camp_jsys = jsys_default;

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
			     bool bex, const void *b, size_t bl, bool aex, const void *a, size_t al,
			     int64_t *id, struct rt_sb *err)
{
	int rc = fault_hit("intent-open", path, err);
	return rc ? rc : fault_real.intent_open(db, iter, action, path, bex, b, bl, aex, a, al, id, err);
}

static int fault_intent_close(struct db *db, int64_t id, const char *state, struct rt_sb *err)
{
	char what[64];
	snprintf(what, sizeof(what), "intent-close %lld", (long long)id);
	int rc = fault_hit(what, NULL, err);
	return rc ? rc : fault_real.intent_close(db, id, state, err);
}

static int fault_intent_after(struct db *db, int64_t id, bool ex, const void *bytes, size_t len,
			      struct rt_sb *err)
{
	char what[64];
	snprintf(what, sizeof(what), "intent-after %lld", (long long)id);
	int rc = fault_hit(what, NULL, err);
	return rc ? rc : fault_real.intent_after(db, id, ex, bytes, len, err);
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

/* Write bytes to path, or remove it, through the table. */
static int put_bytes(const char *path, bool exists, const void *bytes, size_t len, struct rt_sb *err)
{
	return exists ? camp_jsys.write(path, bytes, len, 0644, err) : camp_jsys.remove(path, err);
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

/* Whether path holds exactly the wanted bytes (or is absent as wanted). */
static bool holds(const char *path, bool want_exists, const void *want, size_t want_len,
		  bool *cur_exists, char **cur, size_t *cur_len)
{
	/* Unreadable counts as absent: the move below then writes it. */
	*cur_exists = rt_read_file(path, cur, cur_len, NULL) == 0;
	return *cur_exists == want_exists &&
	       (!want_exists || (*cur_len == want_len && !memcmp(*cur, want, want_len)));
}

/* Original and intent of one file in one transaction. */
static int intent_begin(struct db *db, int64_t cid, int64_t iter, const struct var_file *f,
			const char *action, bool cur_exists, const void *cur, size_t cur_len,
			bool want_exists, const void *want, size_t want_len, int64_t *intent,
			struct rt_sb *err)
{
	int rc = db_begin(db, err);
	if (rc)
		return rc;
	rc = camp_jsys.original(db, cid, f->path, f->existed, f->before, f->before_len, 0644, err);
	if (!rc)
		rc = camp_jsys.intent_open(db, iter, action, f->path, cur_exists, cur, cur_len,
					   want_exists, want, want_len, intent, err);
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
		char *cur = NULL;
		size_t cur_len = 0;
		bool cur_exists;
		int64_t intent = 0;
		if (!holds(f->path, want_exists, want, want_len, &cur_exists, &cur, &cur_len)) {
			rc = intent_begin(db, cid, iter, f, to_cand ? "apply" : "revert", cur_exists, cur,
					  cur_len, want_exists, want, want_len, &intent, err);
			if (!rc)
				rc = put_bytes(f->path, want_exists, want, want_len, err);
			if (!rc)
				rc = camp_jsys.intent_close(db, intent, "done", err);
			if (rc)
				rt_errf(err, 0, " (moving %s to the %s's bytes)", f->path,
					to_cand ? "candidate" : "best");
			else
				(*moved)++;
		}
		free(cur);
	}
	return rc;
}

int camp_journal_patch_open(struct db *db, int64_t cid, int64_t iter, const struct var_plan *plan,
			    int64_t *ids, struct rt_sb *err)
{
	int rc = db_begin(db, err);
	for (size_t i = 0; i < plan->n && !rc; i++) {
		const struct var_file *f = &plan->files[i];
		rc = camp_jsys.original(db, cid, f->path, f->existed, f->before, f->before_len, 0644, err);
		if (!rc)
			rc = camp_jsys.intent_open(db, iter, "apply", f->path, f->existed, f->before,
						   f->before_len, false, NULL, 0, &ids[i], err);
	}
	if (rc)
		db_rollback(db);
	else
		rc = db_commit(db, err);
	if (rc)
		rt_errf(err, 0, " (journaling the files of a patch)");
	return rc;
}

int camp_journal_patch_close(struct db *db, const struct var_plan *plan, const int64_t *ids, bool ok,
			     struct rt_sb *err)
{
	int rc = 0;
	for (size_t i = 0; i < plan->n && !rc; i++) {
		const struct var_file *f = &plan->files[i];
		if (!ok) {
			/* git may have written some files: the before bytes back. */
			rc = put_bytes(f->path, f->existed, f->before, f->before_len, err);
			if (!rc)
				rc = camp_jsys.intent_close(db, ids[i], "undone", err);
			continue;
		}
		char *now = NULL;
		size_t len = 0;
		bool ex = rt_read_file(f->path, &now, &len, NULL) == 0; /* git may have removed it */
		rc = camp_jsys.intent_after(db, ids[i], ex, now, len, err);
		if (!rc)
			rc = camp_jsys.intent_close(db, ids[i], "done", err);
		free(now);
	}
	if (rc)
		rt_errf(err, 0, " (journaling what the patch %s)", ok ? "wrote" : "left, to undo it");
	return rc;
}

/* ---- recovery and restore ---- */

/* Undo open intents, newest first. */
static int undo_open_intents(struct db *db, int64_t campaign_id, int *undone, struct rt_sb *err)
{
	struct db_intent *in = NULL;
	size_t n = 0;
	int rc = db_intents_open_list(db, campaign_id, &in, &n, err);
	for (size_t i = n; i-- > 0 && !rc;) {
		sweep_temps(in[i].path);
		rc = put_bytes(in[i].path, in[i].before_exists, in[i].before, in[i].before_len, err);
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

/* Every touched file back to the best configuration's bytes. */
static int files_to_best(struct db *db, int64_t campaign_id, struct rt_sb *err)
{
	struct db_original *orig = NULL;
	size_t no = 0;
	int rc = db_originals_list(db, campaign_id, &orig, &no, err);
	for (size_t i = 0; i < no && !rc; i++) {
		bool ex, cur_ex;
		void *bytes = NULL;
		char *cur = NULL;
		size_t len, cl;
		sweep_temps(orig[i].path);
		rc = db_best_bytes(db, campaign_id, orig[i].path, &ex, &bytes, &len, err);
		if (!rc && !holds(orig[i].path, ex, bytes, len, &cur_ex, &cur, &cl) &&
		    (rc = put_bytes(orig[i].path, ex, bytes, len, err)))
			rt_errf(err, 0, " (putting back the best configuration's bytes)");
		free(cur);
		free(bytes);
	}
	db_originals_free(orig, no);
	return rc;
}

int run_campaign_recover(struct db *db, int64_t campaign_id, int *undone, int *interrupted,
			 struct rt_sb *err)
{
	*undone = 0;
	*interrupted = 0;
	int rc = undo_open_intents(db, campaign_id, undone, err);
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
	for (size_t i = 0; i < n; i++) {
		char h[65];
		if (!orig[i].existed)
			continue;
		rt_sha256_hex(orig[i].content, orig[i].len, h);
		if (strcmp(h, orig[i].sha256))
			return rt_errf(err, RT_EDB,
				       "%s: the stored original bytes do not match their sha256 (%.12s, stored %.12s); "
				       "nothing was restored",
				       orig[i].path, h, orig[i].sha256[0] ? orig[i].sha256 : "none");
	}
	return 0;
}

int run_campaign_restore(struct db *db, int64_t id, int *n, struct rt_sb *err)
{
	*n = 0;
	struct db_campaign cp;
	memset(&cp, 0, sizeof(cp));
	int rc = id ? db_campaign_get(db, id, &cp, err) : db_campaign_latest(db, NULL, &cp, err);
	if (rc)
		return rc;
	struct db_original *orig = NULL;
	size_t no = 0;
	int undone, interrupted;
	rc = db_originals_list(db, cp.id, &orig, &no, err);
	if (!rc)
		rc = originals_verify(orig, no, err);
	if (!rc)
		rc = run_campaign_recover(db, cp.id, &undone, &interrupted, err);
	for (size_t i = 0; i < no && !rc; i++) {
		rc = put_bytes(orig[i].path, orig[i].existed, orig[i].content, orig[i].len, err);
		if (rc)
			rt_errf(err, 0, " (putting back the pre-campaign bytes)");
		else
			(*n)++;
	}
	db_originals_free(orig, no);
	if (!rc && strcmp(cp.state, "finished"))
		rc = db_campaign_set_state(db, cp.id, "aborted", err);
	db_campaign_release(&cp);
	return rc;
}
