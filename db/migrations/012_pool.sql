-- Version 12: the local device pool (devices:, docs/scale.md). Iterations
-- of a pool are run in rounds: a round's trials are measured concurrently,
-- one per device, each by a worker pinned to its device. Both columns stay
-- NULL for a campaign without a pool.
ALTER TABLE iterations ADD COLUMN round INTEGER;   -- the pool's round (0: the baseline's)
ALTER TABLE iterations ADD COLUMN device TEXT;     -- the worker's device, "cuda:1"; both arms measured on it
