-- ratchet's SQLite schema, at the latest version. A new database runs this
-- file; an older one runs db/migrations/NNN_*.sql in order. PRAGMA
-- user_version holds the version. History is append-only: rows are never
-- deleted, corrections and invalidations are new rows in `notes` that point
-- at what they amend. Times are Unix milliseconds (wall clock).

-- One campaign per `ratchet run` of a spec (a resume continues the same one).
CREATE TABLE campaigns (
  id            INTEGER PRIMARY KEY,
  name          TEXT NOT NULL,
  spec_path     TEXT NOT NULL,
  spec_text     TEXT NOT NULL,
  spec_sha256   TEXT NOT NULL,
  workdir       TEXT NOT NULL,
  seed          INTEGER NOT NULL DEFAULT 1,
  state         TEXT NOT NULL DEFAULT 'running'
                CHECK (state IN ('running', 'finished', 'aborted')),
  best_iteration INTEGER,                     -- iterations.id of the current best config
  created_at    INTEGER NOT NULL,
  finished_at   INTEGER,
  -- The runner that runs it holds its lease (runner/campaign/lease.c): all
  -- NULL when nobody does.
  owner_token   TEXT,                         -- the holder's token
  owner_pid     INTEGER,                      -- the holder's process id
  owner_host    TEXT,                         -- the holder's host name
  owner_since   INTEGER,                      -- when it took the lease
  heartbeat_at  INTEGER                       -- its last heartbeat, renewed every few seconds
);

-- One change tried, or the baseline (seq 0, kind 'baseline').
CREATE TABLE iterations (
  id            INTEGER PRIMARY KEY,
  campaign_id   INTEGER NOT NULL REFERENCES campaigns(id),
  seq           INTEGER NOT NULL,             -- 0 = baseline, then 1, 2, ...
  parent_id     INTEGER REFERENCES iterations(id), -- the best config it was applied on
  variant       TEXT NOT NULL,                -- variant name ('baseline' for seq 0)
  kind          TEXT NOT NULL,                -- baseline | table | flag | env | patch | file
  change_text   TEXT NOT NULL DEFAULT '',     -- describe(): readable diff of the one change
  change_sha256 TEXT,                         -- fingerprint of the change itself
  config_sha256 TEXT,                         -- fingerprint of the resulting configuration
  state         TEXT NOT NULL DEFAULT 'pending'
                CHECK (state IN ('pending', 'applying', 'applied', 'measuring', 'baseline',
                                 'kept', 'reverted', 'gated', 'failed', 'invalid', 'interrupted',
                                 'observed')),
  phase         TEXT,                         -- last phase reached: apply build start bench gate decide revert
  decision      TEXT,                         -- keep | revert | NULL while running
  reason        TEXT,                         -- one human line
  objective     TEXT,                         -- bench.metric
  obj_best      REAL,                         -- median of the current best arm
  obj_cand      REAL,                         -- median of the candidate arm
  obj_delta     REAL,                         -- relative change, signed so that + is better
  obj_ci_lo     REAL,
  obj_ci_hi     REAL,
  confidence    REAL,
  test          TEXT,                         -- e.g. 'bootstrap ratio of medians + Mann-Whitney U'
  p_value       REAL,
  n_cand        INTEGER,
  n_best        INTEGER,
  paired        INTEGER NOT NULL DEFAULT 0,   -- A/B interleaved close in time
  gate_run_id   INTEGER REFERENCES gate_runs(id),
  strategy_note TEXT,                         -- why the strategy proposed it (for people)
  started_at    INTEGER NOT NULL,
  finished_at   INTEGER,
  role          TEXT NOT NULL DEFAULT 'change' -- change | trial | confirm (greedy's roles)
                CHECK (role IN ('change', 'trial', 'confirm')),
  passed        INTEGER,                      -- 1 passed its decision and gate, 0 did not, NULL none reached
  round         INTEGER,                      -- the device pool's round (0: the baseline's), NULL: no pool
  device        TEXT,                         -- the pool worker's device ("cuda:1"), NULL: no pool
  UNIQUE (campaign_id, seq)
);
CREATE INDEX iterations_campaign ON iterations(campaign_id, seq);
CREATE INDEX iterations_state ON iterations(state);

-- File bytes the journal keeps, each content stored once whatever the
-- number of rows that refer to it (originals.content_blob,
-- intents.before_blob and after_blob): an A/B schedule that switches a large
-- table back and forth adds rows, not copies.
CREATE TABLE blobs (
  sha256        TEXT PRIMARY KEY,             -- hex sha256 of content
  size          INTEGER NOT NULL,             -- bytes
  content       BLOB NOT NULL,
  created_at    INTEGER NOT NULL
);

-- Pre-campaign bytes of every file a campaign touched (first touch only).
CREATE TABLE originals (
  id            INTEGER PRIMARY KEY,
  campaign_id   INTEGER NOT NULL REFERENCES campaigns(id),
  path          TEXT NOT NULL,                -- absolute
  existed       INTEGER NOT NULL,             -- 0: the file did not exist before
  content       BLOB,                         -- inline bytes (before version 4; moved to blobs by version 8)
  sha256        TEXT,
  mode          INTEGER,                      -- permission bits (version 8 on); NULL: unknown
  created_at    INTEGER NOT NULL,
  content_blob  TEXT REFERENCES blobs(sha256), -- the bytes (version 4 on); NULL: inline or none
  UNIQUE (campaign_id, path)
);

-- Write-ahead intents: recorded (with the bytes before and after) in the
-- same transaction, before a file is touched; marked done once it is.
CREATE TABLE intents (
  id            INTEGER PRIMARY KEY,
  iteration_id  INTEGER NOT NULL REFERENCES iterations(id),
  action        TEXT NOT NULL CHECK (action IN ('apply', 'revert')),
  path          TEXT NOT NULL,
  before_exists INTEGER NOT NULL,
  before        BLOB,                         -- inline bytes (before version 4; moved to blobs by version 8)
  before_sha256 TEXT,
  after_exists  INTEGER NOT NULL,
  after         BLOB,                         -- inline bytes (before version 4; moved to blobs by version 8)
  after_sha256  TEXT,
  state         TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'done', 'undone')),
  created_at    INTEGER NOT NULL,
  closed_at     INTEGER,
  before_blob   TEXT REFERENCES blobs(sha256), -- the bytes before (version 4 on)
  after_blob    TEXT REFERENCES blobs(sha256), -- the bytes after (version 4 on)
  before_mode   INTEGER,                      -- permission bits before (version 8 on); NULL: unknown
  after_mode    INTEGER                       -- permission bits after (version 8 on); NULL: unknown
);
CREATE INDEX intents_open ON intents(state);

-- One sample of one metric.
CREATE TABLE measurements (
  id            INTEGER PRIMARY KEY,
  iteration_id  INTEGER NOT NULL REFERENCES iterations(id),
  arm           TEXT NOT NULL CHECK (arm IN ('cand', 'best')),
  benchmark     TEXT NOT NULL,                -- benchmark name, or 'log' for log-event counts
  metric        TEXT NOT NULL,
  rep           INTEGER NOT NULL,             -- repeat index within the arm
  value         REAL NOT NULL,
  unit          TEXT,
  valid         INTEGER NOT NULL DEFAULT 1,   -- 0: identity check failed etc.
  invalid_reason TEXT,
  created_at    INTEGER NOT NULL
);
CREATE INDEX measurements_iteration ON measurements(iteration_id, benchmark, metric);

-- Per-metric comparison of one iteration (candidate vs current best).
CREATE TABLE metric_stats (
  id            INTEGER PRIMARY KEY,
  iteration_id  INTEGER NOT NULL REFERENCES iterations(id),
  benchmark     TEXT NOT NULL,
  metric        TEXT NOT NULL,
  unit          TEXT,
  better        TEXT NOT NULL CHECK (better IN ('higher', 'lower')),
  best_median   REAL,
  cand_median   REAL,
  best_mad      REAL,
  cand_mad      REAL,
  ratio         REAL,                         -- cand / best medians
  ci_lo         REAL,                         -- bootstrap CI of the ratio
  ci_hi         REAL,
  p_value       REAL,                         -- Mann-Whitney U, two-sided
  n_best        INTEGER,
  n_cand        INTEGER
);
CREATE INDEX metric_stats_iteration ON metric_stats(iteration_id);

-- A tracked metric that got worse beyond the noise (kept changes too).
CREATE TABLE regressions (
  id            INTEGER PRIMARY KEY,
  iteration_id  INTEGER NOT NULL REFERENCES iterations(id),
  benchmark     TEXT NOT NULL,
  metric        TEXT NOT NULL,
  unit          TEXT,
  before        REAL NOT NULL,
  after         REAL NOT NULL,
  delta         REAL NOT NULL,                -- relative, signed so that - is worse
  ci_lo         REAL,
  ci_hi         REAL,
  kept          INTEGER NOT NULL DEFAULT 0,   -- the change was kept anyway
  created_at    INTEGER NOT NULL
);

-- GSM8K gate runs: from `ratchet gate` (iteration_id NULL) or a campaign.
CREATE TABLE gate_runs (
  id            INTEGER PRIMARY KEY,
  iteration_id  INTEGER REFERENCES iterations(id),
  label         TEXT,                         -- endpoint label for latest-pass lookup
  endpoint      TEXT NOT NULL,
  model         TEXT,
  api           TEXT NOT NULL,
  format        TEXT NOT NULL,
  extract       TEXT NOT NULL,                -- flexible | strict: the one that decides
  dataset_sha256 TEXT,
  n_planned     INTEGER NOT NULL,
  n_done        INTEGER NOT NULL DEFAULT 0,
  n_correct     INTEGER NOT NULL DEFAULT 0,   -- by the deciding extraction
  n_correct_strict INTEGER,
  n_correct_flex INTEGER,
  n_failed      INTEGER NOT NULL DEFAULT 0,
  accuracy      REAL,
  wilson_lo     REAL,
  wilson_hi     REAL,
  baseline_run_id INTEGER REFERENCES gate_runs(id),
  diff          REAL,                         -- paired accuracy difference vs baseline
  diff_lo       REAL,                         -- Newcombe interval
  diff_hi       REAL,
  mcnemar_p     REAL,                         -- mid-p
  identical_rate REAL,
  flips_to_wrong INTEGER,
  flips_to_right INTEGER,
  early_stop    INTEGER NOT NULL DEFAULT 0,
  passed        INTEGER,                      -- 1 pass, 0 fail, NULL error / running
  verdict       TEXT,                         -- one line
  params_json   TEXT,                         -- thresholds and settings used
  started_at    INTEGER NOT NULL,
  finished_at   INTEGER,
  identical_response_rate REAL                -- same response text (sha256) as the baseline (version 16)
);

CREATE TABLE gate_answers (
  id            INTEGER PRIMARY KEY,
  run_id        INTEGER NOT NULL REFERENCES gate_runs(id),
  idx           INTEGER NOT NULL,             -- question index in the dataset
  prompt_sha256 TEXT NOT NULL,
  response      TEXT,                         -- kept for failures and flips (else NULL)
  response_sha256 TEXT,
  extracted_strict TEXT,
  extracted_flex TEXT,
  target        TEXT,
  correct       INTEGER,                      -- by the deciding extraction
  correct_strict INTEGER,
  correct_flex  INTEGER,
  finish_reason TEXT,
  prompt_tokens INTEGER,
  completion_tokens INTEGER,
  failed        INTEGER NOT NULL DEFAULT 0,
  error         TEXT,
  latency_s     REAL,
  UNIQUE (run_id, idx)
);

-- Per-request records of a load benchmark.
CREATE TABLE requests (
  id            INTEGER PRIMARY KEY,
  iteration_id  INTEGER REFERENCES iterations(id),
  benchmark     TEXT NOT NULL,
  arm           TEXT,                         -- cand | best | NULL (ratchet bench load)
  rep           INTEGER,
  run_label     TEXT,                         -- e.g. 'rate=3.0 seed=1'
  seq           INTEGER NOT NULL,
  intended_ns   INTEGER,                      -- scheduled send, relative to run start
  sent_ns       INTEGER,                      -- actual send, relative to run start
  ttft_s        REAL,
  e2el_s        REAL,
  itl_mean_s    REAL,
  itl_max_s     REAL,
  n_chunks      INTEGER,
  prompt_tokens INTEGER,
  output_tokens INTEGER,
  ok            INTEGER NOT NULL,
  status        INTEGER,                      -- HTTP status
  error         TEXT
);
CREATE INDEX requests_iteration ON requests(iteration_id);

-- Facts about where a measurement was taken.
CREATE TABLE env_facts (
  id            INTEGER PRIMARY KEY,
  campaign_id   INTEGER REFERENCES campaigns(id),
  iteration_id  INTEGER REFERENCES iterations(id),
  key           TEXT NOT NULL,                -- host, kernel, cpu, device.name, device.uuid, driver, engine.version, git.<dir> ...
  value         TEXT NOT NULL,
  created_at    INTEGER NOT NULL
);

-- Logs, profiles, build output.
CREATE TABLE artifacts (
  id            INTEGER PRIMARY KEY,
  campaign_id   INTEGER REFERENCES campaigns(id),
  iteration_id  INTEGER REFERENCES iterations(id),
  kind          TEXT NOT NULL,                -- engine-log | build-log | bench-output | profile
  name          TEXT NOT NULL,
  sha256        TEXT NOT NULL,
  size          INTEGER NOT NULL,
  content       BLOB,
  truncated     INTEGER NOT NULL DEFAULT 0,
  created_at    INTEGER NOT NULL
);

-- Notes, corrections and invalidations. Nothing here is ever updated.
CREATE TABLE notes (
  id            INTEGER PRIMARY KEY,
  iteration_id  INTEGER NOT NULL REFERENCES iterations(id),
  kind          TEXT NOT NULL CHECK (kind IN ('note', 'correction', 'invalidation')),
  by_iteration_id INTEGER REFERENCES iterations(id), -- correction: the iteration whose findings correct this one
  text          TEXT NOT NULL,
  author        TEXT,
  created_at    INTEGER NOT NULL
);
CREATE INDEX notes_iteration ON notes(iteration_id);

-- Measured device ceilings for %-of-peak figures.
CREATE TABLE device_peaks (
  id            INTEGER PRIMARY KEY,
  backend       TEXT NOT NULL,
  device_id     TEXT NOT NULL,                -- UUID or PCI id
  device_name   TEXT,
  kind          TEXT NOT NULL CHECK (kind IN ('copy_gbps', 'gflops')),
  value         REAL NOT NULL,
  measured_at   INTEGER NOT NULL
);

-- Research side: imported profiles (version 7) with their per-op and
-- per-kernel sums, and findings: table-coverage holes, hot ops and ranked
-- candidates, each with its Amdahl bound in potential.
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
  created_at      INTEGER NOT NULL,
  wall_us         REAL,                               -- the steps' wall time, else the kernels' span (version 15)
  wall_from       TEXT,                               -- steps | span
  short_kernels   INTEGER,                            -- kernels that ran under 10 us
  host_launches   INTEGER,                            -- kernels the host launched one at a time
  graph_launches  INTEGER                             -- graph launches
);
CREATE TABLE profile_ops (
  profile_id      INTEGER NOT NULL REFERENCES profiles(id),
  op              TEXT NOT NULL,                      -- attention | gemm | norm | ...
  time_us         REAL NOT NULL,
  share           REAL NOT NULL,                      -- of total_us
  calls           INTEGER NOT NULL,
  calls_per_step  REAL,                               -- NULL when steps are unknown
  wall_share      REAL,                               -- of the profile's wall_us, NULL unknown (version 15)
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

CREATE TABLE findings (
  id            INTEGER PRIMARY KEY,
  campaign_id   INTEGER REFERENCES campaigns(id),
  kind          TEXT NOT NULL,                -- hole | hot_op | fallback | recompile_storm | ungraphed | upstream
  subject       TEXT NOT NULL,
  detail        TEXT,
  potential     REAL,                         -- most it could gain, fraction: the Amdahl bound
  created_at    INTEGER NOT NULL,
  profile_id    INTEGER REFERENCES profiles(id),     -- the profile it came from (version 7)
  iteration_id  INTEGER REFERENCES iterations(id),   -- the observe iteration that found it
  share         REAL,                         -- of the profile's time it concerns
  speedup       REAL,                         -- the plausible speedup assumed
  evidence      TEXT,                         -- what it rests on, for people
  variant       TEXT                          -- a variant acting on it (JSON), or NULL
);

-- Every engine launch and its provenance (migration 006).
CREATE TABLE launches (
  id            INTEGER PRIMARY KEY,
  campaign_id   INTEGER NOT NULL REFERENCES campaigns(id),
  iteration_id  INTEGER REFERENCES iterations(id),
  arm           TEXT NOT NULL,                -- best | cand
  pgid          INTEGER,                      -- process group at launch
  port          INTEGER NOT NULL,
  ready_s       REAL,                         -- start to ready, seconds
  version       TEXT,                         -- self-reported: GET /version, /props, /get_server_info
  exe_path      TEXT,                         -- argv[0] resolved on PATH
  exe_sha256    TEXT,
  image_ref     TEXT,                         -- docker/podman run: the image as written
  image_digest  TEXT,                         -- from `image inspect`, NULL when it could not run
  repos         TEXT,                         -- JSON [{path, head, dirty}]
  extra         TEXT,                         -- engine.provenance output, redacted
  note          TEXT,                         -- what could not be recorded
  differs       TEXT,                         -- vs the campaign's first launch, NULL: same
  created_at    INTEGER NOT NULL,
  libs          TEXT                          -- JSON {path: sha256}: shared objects mapped (version 16)
);

-- The Slurm executor's journal (version 10, executor: slurm, docs/scale.md).
CREATE TABLE slurm_jobs (
  id            INTEGER PRIMARY KEY,
  campaign_id   INTEGER NOT NULL REFERENCES campaigns(id),
  job_id        TEXT NOT NULL,                -- sbatch --parsable's id
  node          TEXT,                         -- the node it was given (squeue %N)
  state         TEXT NOT NULL CHECK (state IN ('held', 'released', 'cancelled', 'gone')),
  reason        TEXT,                         -- why it ended, when known
  created_at    INTEGER NOT NULL,
  ended_at      INTEGER
);
CREATE INDEX slurm_jobs_campaign ON slurm_jobs(campaign_id);
-- One row per step, from the step's own launch record (ratchet __step):
-- where it ran and which process it was, since /proc of another node is not
-- visible to the runner.
CREATE TABLE slurm_steps (
  id            INTEGER PRIMARY KEY,
  job_row       INTEGER NOT NULL REFERENCES slurm_jobs(id),
  iteration_id  INTEGER REFERENCES iterations(id),
  arm           TEXT,                         -- best | cand
  rep           INTEGER,                      -- sample number within the arm
  step_id       TEXT NOT NULL,                -- JOB.STEP (SLURM_JOB_ID.SLURM_STEP_ID)
  program       TEXT,                         -- the step's argv[0]
  node          TEXT,                         -- SLURMD_NODENAME (the host name as fallback)
  pid           INTEGER,                      -- the process on that node
  start_ticks   INTEGER,                      -- its start time (/proc/PID/stat field 22)
  started_at    INTEGER NOT NULL,             -- ms since the epoch, from the node's clock
  outcome       TEXT NOT NULL CHECK (outcome IN ('ok', 'failed', 'killed', 'stopped')),
  reason        TEXT                          -- a killed step's reason (sacct or scontrol); stopped: by the runner
);
CREATE INDEX slurm_steps_iteration ON slurm_steps(iteration_id);

-- Indexes for `ratchet show` and the reports.
CREATE INDEX regressions_iteration ON regressions(iteration_id);
CREATE INDEX env_facts_iteration ON env_facts(iteration_id);
CREATE INDEX artifacts_iteration ON artifacts(iteration_id);
CREATE INDEX notes_by ON notes(by_iteration_id);
CREATE INDEX intents_iteration ON intents(iteration_id);
CREATE INDEX launches_campaign ON launches(campaign_id);
CREATE INDEX launches_iteration ON launches(iteration_id);

-- What a search strategy proposed (version 9): one row per iteration of a
-- space strategy, its point, fingerprint, fidelity, reason, the generated
-- variant as the spec would write it and the strategy's state.
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

-- strategy llm's conversation (version 11). One row per chat request the
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
