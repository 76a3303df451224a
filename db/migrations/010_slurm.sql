-- Version 10: the Slurm executor's journal (executor: slurm, docs/scale.md).
-- A campaign holds one allocation at a time (a holding job from sbatch);
-- every benchmark and engine of a measurement runs as a step of it.
-- `ratchet run --resume` reads slurm_jobs to re-attach to a job still
-- running or cancel one left behind.
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
