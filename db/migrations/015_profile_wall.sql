-- Version 15: a profile's wall time beside its kernel time (issue 27). The
-- wall time is the steps' (their annotations' spans, PyTorch's
-- ProfilerStep#N) or, without steps, the kernels' span, first start to last
-- end; the GPU is idle for the rest. The host's launches say how kernels
-- were started: one at a time (cudaLaunchKernel, cuLaunchKernel*,
-- hipLaunchKernel...) or from a graph (cudaGraphLaunch). All NULL when the
-- format carries no timing (an ncu CSV, a unitrace summary).
ALTER TABLE profiles ADD COLUMN wall_us REAL;           -- the steps' wall time, else the kernels' span
ALTER TABLE profiles ADD COLUMN wall_from TEXT;         -- steps | span
ALTER TABLE profiles ADD COLUMN short_kernels INTEGER;  -- kernels that ran under 10 us
ALTER TABLE profiles ADD COLUMN host_launches INTEGER;  -- kernels the host launched one at a time
ALTER TABLE profiles ADD COLUMN graph_launches INTEGER; -- graph launches
ALTER TABLE profile_ops ADD COLUMN wall_share REAL;     -- time_us over the profile's wall_us
