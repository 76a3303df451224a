/*
 * A tiny OpenAI-compatible GSM8K server for the gate's tests (libmicrohttpd),
 * following simserve's GSM8K rules: it finds the last question in the
 * prompt, answers dataset question i correctly iff
 * floor((i+1)*F) > floor(i*F), XOR i in the flip list, and wrong answers
 * use N+1. Test knobs simserve lacks: HTTP 500 for chosen questions, a 503
 * on the first attempt, a required API key (401 without it), the last
 * Authorization header it saw, every request body recorded to a file (one
 * per line), and GET /v1/models listing one model id.
 */
#ifndef GATE_FAKESERVER_H
#define GATE_FAKESERVER_H

#include <stddef.h>

#include "runner/gate/gsm8k.h"

struct fake_cfg {
	const struct gsm8k_set *test; /* the dataset questions are looked up in */
	double accuracy;              /* F */
	const int *flip;              /* question indexes whose correctness flips */
	size_t n_flip;
	int fail_every;               /* >0: question i with i % fail_every == 0 always gets HTTP 500 */
	int flaky_every;              /* >0: such questions get 503 on their first attempt */
	int delay_ms;                 /* per request */
	const char *require_key;      /* non-NULL: requests without "Authorization: Bearer <it>" get 401 */
	const char *record;           /* non-NULL: append each POST body, one per line, to this file */
	const char *model_id;         /* non-NULL: GET /v1/models lists it; else that GET gets 404 */
};

struct fake_server;
/* Start on 127.0.0.1, a free port; NULL on failure. */
struct fake_server *fake_start(const struct fake_cfg *cfg, int *port);
void fake_stop(struct fake_server *s);
long fake_requests(struct fake_server *s);
/* Last Authorization header seen, copied into out ("" if none). */
void fake_last_auth(struct fake_server *s, char *out, size_t n);

#endif
