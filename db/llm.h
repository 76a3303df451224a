/*
 * The llm_exchanges table (migration 11): every chat request strategy llm
 * made, with the verdict on its answer. The campaign reads it back for the
 * budget (calls and tokens so far), for --resume (an accepted answer not yet
 * measured is reused) and `ratchet show` prints a round beside its decision.
 * Nothing here sees the API key: callers store the messages they sent.
 */
#ifndef DB_LLM_H
#define DB_LLM_H

#include "db/db.h"

/* What became of an answer: value, stored word. */
#define DB_LLM_VERDICTS(X)                        \
	X(DB_LLM_ACCEPTED, "accepted")     /* a valid, allowed, new change */ \
	X(DB_LLM_INVALID, "invalid")       /* not JSON, or not a valid variant */ \
	X(DB_LLM_DISALLOWED, "disallowed") /* a kind or file it may not touch */ \
	X(DB_LLM_DUPLICATE, "duplicate")   /* a change already measured */ \
	X(DB_LLM_FAILED, "failed")         /* no answer: the request failed */

enum db_llm_verdict {
#define DB_LLM_ENUM(e, word) e,
	DB_LLM_VERDICTS(DB_LLM_ENUM)
#undef DB_LLM_ENUM
};

/* The stored word of a verdict; "unknown" out of range. */
const char *db_llm_verdict_name(enum db_llm_verdict v);

/* One chat request and its answer. */
struct db_llm_exchange {
	int64_t id;              /* row id (read back) */
	int seq;                 /* the iteration number it asked for */
	int attempt;             /* 1 the question, 2 the re-ask */
	int64_t iteration_id;    /* the iteration that took the round, 0: none yet */
	char *request;           /* the messages sent, JSON */
	char *response;          /* the response body, or NULL */
	enum db_llm_verdict verdict; /* what became of it */
	char *error;             /* why it was refused, or NULL */
	char *variant;           /* accepted: the change, JSON; else NULL */
	char *fingerprint;       /* accepted: the change's fingerprint; else NULL */
	char *rationale;         /* the answer's rationale, or NULL */
	int prompt_tokens;       /* -1 when the server did not say */
	int completion_tokens;   /* -1 when the server did not say */
	double latency_ms;       /* sending to the whole response */
	int64_t created_at;      /* ms since the epoch (read back; written as now) */
};

/* Record one exchange of campaign_id (x->id set): 0 or RT_EDB. */
int db_llm_add(struct db *db, int64_t campaign_id, struct db_llm_exchange *x, struct rt_sb *err);
/* The round of iteration number seq is the iteration iteration_id's: its
 * exchanges that no iteration took yet, or an interrupted one took (its
 * answer measured again), are linked to iteration_id. Those a finished
 * iteration took stay (a pool's confirmation measures its trial's answer
 * again). */
int db_llm_link(struct db *db, int64_t campaign_id, int seq, int64_t iteration_id, struct rt_sb *err);
/* Every exchange of a campaign in the order made; free with db_llm_free. */
int db_llm_list(struct db *db, int64_t campaign_id, struct db_llm_exchange **out, size_t *n,
		struct rt_sb *err);
/* Exchange id of campaign_id: *n is 1, or 0 when it has none of that id;
 * free with db_llm_free. */
int db_llm_get(struct db *db, int64_t campaign_id, int64_t id, struct db_llm_exchange **out, size_t *n,
	       struct rt_sb *err);
/* The exchanges an iteration took, in the order made; free with db_llm_free. */
int db_llm_of_iteration(struct db *db, int64_t iteration_id, struct db_llm_exchange **out, size_t *n,
			struct rt_sb *err);
void db_llm_free(struct db_llm_exchange *v, size_t n);

#endif
