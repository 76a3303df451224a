-- Version 7: the research side reads profiles. An imported profile is a row
-- of `profiles` with its per-op sums (`profile_ops`) and per-kernel, per-shape
-- sums (`profile_kernels`); a finding says which profile (and which observe
-- iteration) it came from, its share, the speedup assumed and the Amdahl
-- bound (potential), its evidence and, when it has one, the variant that
-- would act on it. An `observe` iteration changes nothing and records a
-- profile: its final state is 'observed'. SQLite cannot alter a CHECK, and a
-- table rebuild would need foreign keys off (migrations run in one
-- transaction), so the state list is widened in place, as SQLite's ALTER
-- TABLE page allows for a change that loosens a constraint and leaves the
-- stored rows valid.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = replace(sql, '''invalid'', ''interrupted'')',
                                       '''invalid'', ''interrupted'', ''observed'')')
  WHERE type = 'table' AND name = 'iterations';
PRAGMA writable_schema = RESET;

CREATE TABLE profiles (
  id              INTEGER PRIMARY KEY,
  campaign_id     INTEGER REFERENCES campaigns(id),   -- NULL: imported outside a campaign
  iteration_id    INTEGER REFERENCES iterations(id),  -- the observe iteration, or NULL
  path            TEXT NOT NULL,                      -- the file as given
  format          TEXT NOT NULL,                      -- chrome | nsys | rocprof | unitrace
  sha256          TEXT,                               -- of the file
  total_us        REAL NOT NULL,                      -- kernel time in all
  launches        INTEGER NOT NULL,                   -- kernel launches read
  steps           INTEGER,                            -- steps (annotations or --steps); NULL unknown
  steps_from      TEXT,                               -- trace | option
  ungraphed_steps INTEGER,                            -- steps annotated graphed: false
  ungraphed_us    REAL,                               -- their duration
  ungraphed_batch INTEGER,                            -- the largest batch among them
  graph_max_batch INTEGER,                            -- the largest graphed batch seen
  created_at      INTEGER NOT NULL
);
CREATE TABLE profile_ops (
  profile_id      INTEGER NOT NULL REFERENCES profiles(id),
  op              TEXT NOT NULL,                      -- attention | gemm | norm | ...
  time_us         REAL NOT NULL,
  share           REAL NOT NULL,                      -- of total_us
  calls           INTEGER NOT NULL,
  calls_per_step  REAL,                               -- NULL when steps are unknown
  PRIMARY KEY (profile_id, op)
);
CREATE TABLE profile_kernels (
  id              INTEGER PRIMARY KEY,
  profile_id      INTEGER NOT NULL REFERENCES profiles(id),
  name            TEXT NOT NULL,
  op              TEXT NOT NULL,
  shape           TEXT,                               -- from the args or the name, NULL none
  fallback        INTEGER NOT NULL DEFAULT 0,         -- a default (untuned) kernel
  time_us         REAL NOT NULL,
  share           REAL NOT NULL,
  calls           INTEGER NOT NULL
);
CREATE INDEX profile_kernels_profile ON profile_kernels(profile_id);
CREATE INDEX profiles_campaign ON profiles(campaign_id);

ALTER TABLE findings ADD COLUMN profile_id INTEGER REFERENCES profiles(id);
ALTER TABLE findings ADD COLUMN iteration_id INTEGER REFERENCES iterations(id);
ALTER TABLE findings ADD COLUMN share REAL;          -- of the profile's time it concerns
ALTER TABLE findings ADD COLUMN speedup REAL;        -- the plausible speedup assumed
ALTER TABLE findings ADD COLUMN evidence TEXT;       -- what it rests on, for people
ALTER TABLE findings ADD COLUMN variant TEXT;        -- a variant acting on it (JSON), or NULL
