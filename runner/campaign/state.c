/*
 * What every room of runner/campaign/ calls and that calls nothing back:
 * the stop flag a signal sets, the campaign's broken state (camp_fatal),
 * a warning that does not stop the run, the seed hash, and the moves an
 * iteration's state may make (iter.c moves it, decide.c ends it). Kept apart from
 * loop.c so that the rooms below the scheduler do not call up into it.
 */
#include "runner/campaign/campaign_int.h"

#include <stdio.h>
#include <stdlib.h>

volatile sig_atomic_t camp_stop_requested;

int camp_fatal(struct camp *c, int rc)
{
	if (!c->fatal)
		c->fatal = rc;
	return rc;
}

void camp_warn(struct camp *c, const char *what, const struct rt_sb *why)
{
	char *msg = xasprintf("warning: %s: %s (not stored; the campaign goes on)", what, why->buf);
	if (c->o->quiet)
		fprintf(stderr, "ratchet: %s\n", msg);
	else
		rep_progress_msg(&c->prog, msg);
	free(msg);
}

uint64_t camp_hash_seed(uint64_t seed, const char *s)
{
	uint64_t h = 1469598103934665603ULL ^ seed;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}


/* ---- the state machine ---- */

#define M(a, b) { DB_ITER_##a, DB_ITER_##b }
static const struct {
	enum db_iter_state from, to;
} moves[] = {
	M(PENDING, APPLYING), M(PENDING, MEASURING), M(PENDING, FAILED), M(PENDING, INTERRUPTED),
	M(PENDING, REVERTED), /* the change leaves the best configuration as it is: not measured */
	M(APPLYING, APPLIED), M(APPLYING, FAILED), M(APPLYING, INTERRUPTED),
	M(APPLIED, MEASURING), M(APPLIED, KEPT), M(APPLIED, FAILED), M(APPLIED, INTERRUPTED),
	M(MEASURING, APPLYING), M(MEASURING, MEASURING), M(MEASURING, BASELINE), M(MEASURING, KEPT),
	M(MEASURING, REVERTED), M(MEASURING, GATED), M(MEASURING, FAILED), M(MEASURING, INVALID),
	M(MEASURING, INTERRUPTED),
};
#undef M

bool camp_state_allowed(enum db_iter_state from, enum db_iter_state to)
{
	for (size_t i = 0; i < RT_ARRAY_SIZE(moves); i++)
		if (moves[i].from == from && moves[i].to == to)
			return true;
	return false;
}

