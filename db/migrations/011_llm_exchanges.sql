-- Version 11: strategy llm's conversation. One row per chat request the
-- tuning agent made: the iteration number it asked for (seq), the attempt
-- (1 the question, 2 the re-ask carrying the first answer's error), the
-- request's messages as sent (never the key nor any header), the response
-- body, the verdict on the answer and why, the tokens the server counted
-- and the request's latency. iteration_id links the round to the iteration
-- that measured its accepted answer, or that records it as a failed
-- proposal; `ratchet show` prints them beside the decision. An accepted
-- answer not yet measured is reused on --resume, never asked again.
CREATE TABLE llm_exchanges (
  id                INTEGER PRIMARY KEY,
  campaign_id       INTEGER NOT NULL REFERENCES campaigns(id),
  seq               INTEGER NOT NULL,             -- the iteration number it asked for
  attempt           INTEGER NOT NULL,             -- 1 the question, 2 the re-ask with the error
  iteration_id      INTEGER REFERENCES iterations(id), -- NULL until an iteration takes the round
  request           TEXT NOT NULL,                -- the messages sent, JSON
  response          TEXT,                         -- the response body, NULL when none arrived
  verdict           TEXT NOT NULL CHECK (verdict IN ('accepted', 'invalid', 'disallowed', 'duplicate', 'failed')),
  error             TEXT,                         -- why it was refused (or the request failed)
  variant           TEXT,                         -- accepted: the change, JSON as the spec writes it
  fingerprint       TEXT,                         -- accepted: the change's fingerprint
  rationale         TEXT,                         -- the answer's rationale, when it had one
  prompt_tokens     INTEGER,                      -- usage.prompt_tokens, NULL when absent
  completion_tokens INTEGER,                      -- usage.completion_tokens, NULL when absent
  latency_ms        REAL NOT NULL,                -- from sending to the whole response
  created_at        INTEGER NOT NULL              -- ms since the epoch
);
CREATE INDEX llm_exchanges_campaign ON llm_exchanges(campaign_id, seq);
CREATE INDEX llm_exchanges_iteration ON llm_exchanges(iteration_id);
