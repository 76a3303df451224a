#!/bin/sh
# An engine under executor: slurm: simserve runs as a job step (ratchet
# __step, srun --overlap) and its identity is proved by the step's launch
# record (Slurm lists the step as running; the record names simserve, the
# node and its pid) with the launch nonce it echoes: the port's owner is no
# child of the runner, so without that proof every sample would be stored
# invalid. Each launch's engine step is journaled as stopped by the runner;
# nothing is left in squeue. (One node: the engine's host stays 127.0.0.1;
# on another node it is that node's name, exec_slurm.c's slurm_host.)
set -eu
. "$RATCHET_SRC/tests/campaign/slurm_common.sh"
cat > "$W/spec.yaml" <<Y
name: slurmengine
engine:
  command: ["$RATCHET_BUILD/simserve", --port, "{port}", --nonce, "{nonce}"]
  ready: {http: /health, timeout: 20s}
  stop_grace: 2s
benchmarks:
  - name: decode
    load: {concurrency: 2, prompt_tokens: 8, output_tokens: 8, requests: 10}
objective: {metric: decode.output_throughput, goal: max, min_gain: 50%}
repeats: {min: 2, max: 2}
variants:
  - {name: g16, flag: [--max-graph-bs, "16"]}
executor: {kind: slurm, slurm: {gres: "gpu:1", time: 10m}}
Y
rc=0
(cd "$W" && "$RATCHET_BIN" --db c.db run --quiet spec.yaml >"$W/run.out" 2>"$W/run.err") || rc=$?
[ "$rc" -le 1 ] || { cat "$W/run.err"; q "SELECT seq, state, reason FROM iterations"; fail "run exited $rc"; }
[ "$(q "SELECT state FROM campaigns")" = finished ] || fail "campaign not finished"
job=$(q "SELECT job_id FROM slurm_jobs")
n=$(q "SELECT count(*) FROM slurm_steps WHERE program LIKE '%simserve' AND step_id LIKE '$job.%' AND node = '$(hostname)' AND pid > 0")
echo "job $job: $n engine steps"
[ "$n" = 6 ] || fail "expected 6 engine launches as steps, got $n: $(q "SELECT step_id, program, outcome FROM slurm_steps")"
# srun ends a step it is told to stop with SIGKILL: journaled as stopped, not killed.
[ "$(q "SELECT count(*) FROM slurm_steps WHERE outcome != 'stopped'")" = 0 ] || fail "an engine step did not end by the runner's stop: $(q "SELECT step_id, program, outcome, reason FROM slurm_steps WHERE outcome != 'stopped'")"
[ "$(q "SELECT count(*) FROM measurements WHERE benchmark = 'decode' AND metric = 'output_throughput' AND valid = 1")" = 6 ] || fail "samples missing"
slurm_none_left
echo PASS
