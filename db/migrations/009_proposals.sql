-- Version 9: what a search strategy proposed. One row per iteration of a
-- space strategy (coordinate, random, halving, model): the point, its
-- fingerprint (a point already measured in the campaign is never measured
-- twice at the same fidelity), the fidelity it was measured at (only full
-- fidelity decides keeps), the reason, the generated variant as the spec
-- would write it (a kept one is rebuilt from it on --resume) and the
-- strategy's state after the step. The strategies rebuild from these rows,
-- so --resume continues the same search.
CREATE TABLE proposals (
  id            INTEGER PRIMARY KEY,
  campaign_id   INTEGER NOT NULL REFERENCES campaigns(id),
  iteration_id  INTEGER NOT NULL UNIQUE REFERENCES iterations(id),
  strategy      TEXT NOT NULL,                -- coordinate | random | halving | model
  target        INTEGER NOT NULL,             -- index of the space's target
  point         TEXT NOT NULL,                -- JSON {parameter: value}
  fingerprint   TEXT NOT NULL,                -- sha256 of the target and the point
  fidelity      REAL NOT NULL,                -- 1 full; less: a cheap measurement, never kept
  reason        TEXT NOT NULL,                -- why, for people
  variant       TEXT NOT NULL,                -- the generated variant, JSON
  state         TEXT                          -- the strategy's state after the step, JSON
);
CREATE INDEX proposals_fingerprint ON proposals(campaign_id, fingerprint);
