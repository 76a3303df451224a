-- Version 13: replay (`ratchet replay --from CAMPAIGN SPEC`, docs/replay.md).
-- A replay is a campaign whose variants are another campaign's kept
-- changes ("levers"), measured one per iteration on a new base. replays
-- says where they came from; replay_levers holds each lever's lineage, its
-- gain then (in the campaign it was kept in) and, once decided, its gain
-- now and its verdict.
CREATE TABLE replays (
  campaign_id   INTEGER PRIMARY KEY REFERENCES campaigns(id), -- the replay
  from_campaign INTEGER NOT NULL,              -- the campaign whose kept changes it replays
  ord           TEXT NOT NULL CHECK (ord IN ('original', 'best-first')),
  onto          TEXT                           -- --onto REV as given, NULL when none
);
CREATE TABLE replay_levers (
  campaign_id    INTEGER NOT NULL REFERENCES campaigns(id), -- the replay
  ord            INTEGER NOT NULL,             -- 1-based place in the replay's order
  variant        TEXT NOT NULL,                -- the lever's variant name in the replay
  kind           TEXT NOT NULL,                -- table | flag | env | patch | file
  from_campaign  INTEGER NOT NULL,             -- lineage: the campaign it was kept in
  from_iteration INTEGER,                      -- lineage: that iteration's id
  from_seq       INTEGER,                      -- lineage: that iteration's seq
  objective      TEXT,                         -- bench.metric, as then
  then_delta     REAL,                         -- gain then, relative, + is better
  then_lo        REAL,                         -- its interval, low end
  then_hi        REAL,                         -- its interval, high end
  then_cand      REAL,                         -- the objective's median with it then
  verdict        TEXT CHECK (verdict IN ('held', 'lost', 'reversed', 'not_applicable', 'superseded')),
  reason         TEXT,                         -- why, for people (git's reason when it does not apply)
  iteration_id   INTEGER REFERENCES iterations(id), -- the replay's iteration that decided it
  now_delta      REAL,                         -- gain now
  now_lo         REAL,
  now_hi         REAL,
  PRIMARY KEY (campaign_id, variant)
);
