-- Version 16: each launch records the sha256 of every shared object its
-- processes map executable (/proc/PID/maps). llama-server's code is in
-- libllama.so and libggml*.so, so a patched ggml is a different engine even
-- when the executable and /props's version are the same. (14 was this
-- change's number before 13 and 15 landed first; nothing uses 14.)
ALTER TABLE launches ADD COLUMN libs TEXT; -- JSON {path: sha256}, NULL when unknown
-- And the gate compares whole responses too: on a model whose extracted
-- answers are all "[invalid]" (random weights), the share of paired
-- questions whose response text has the same sha256 as the baseline's is
-- what shows a numerics change.
ALTER TABLE gate_runs ADD COLUMN identical_response_rate REAL;
