#!/bin/sh
# executor: slurm on a real single-node cluster: the campaign holds one
# allocation (sbatch --parsable), every measurement's benchmark runs as a
# job step of it (srun --overlap, through `ratchet __step`), each step's
# launch record (step id, node, pid) is journaled in slurm_steps, the step
# ids seen in squeue while it ran are the ones in the database, and at the
# end the job is cancelled and nothing is left in squeue.
set -eu
. "$RATCHET_SRC/tests/campaign/slurm_common.sh"
slurm_campaign "$W" 300
( while :; do squeue -h -s -o %i 2>/dev/null | grep -E "^[0-9]+\.[0-9]+$" >>"$W/seen" || true; sleep 0.1; done ) &
watcher=$!
rc=0
(cd "$W" && "$RATCHET_BIN" --db c.db run --quiet spec.yaml >"$W/run.out" 2>"$W/run.err") || rc=$?
kill $watcher 2>/dev/null || true
[ "$rc" -le 1 ] || fail "run exited $rc"
job=$(q "SELECT job_id FROM slurm_jobs")
[ -n "$job" ] || fail "no job journaled"
[ "$(q "SELECT count(*) FROM slurm_jobs")" = 1 ] || fail "more than one allocation"
[ "$(q "SELECT state FROM slurm_jobs")" = released ] || fail "job not released: $(q "SELECT state FROM slurm_jobs")"
[ "$(q "SELECT node FROM slurm_jobs")" = "$(hostname)" ] || fail "node not journaled"
samples=$(q "SELECT count(DISTINCT iteration_id || arm || rep) FROM measurements WHERE benchmark = 'fake'")
steps=$(q "SELECT count(*) FROM slurm_steps WHERE outcome = 'ok' AND program LIKE '%fakebench'")
echo "job $job: $samples samples, $steps steps"
[ "$samples" -ge 6 ] || fail "expected at least 6 samples, got $samples"
[ "$steps" = "$samples" ] || fail "$samples samples but $steps steps journaled"
[ "$(q "SELECT count(*) FROM slurm_steps WHERE step_id NOT LIKE '$job.%' OR node != '$(hostname)' OR pid <= 0 OR start_ticks <= 0")" = 0 ] ||
	fail "a step record is not of job $job on this node: $(q "SELECT * FROM slurm_steps")"
[ "$(q "SELECT count(DISTINCT step_id) FROM slurm_steps")" = "$steps" ] || fail "step ids repeat"
[ "$(q "SELECT count(*) FROM slurm_steps s JOIN measurements m ON m.iteration_id = s.iteration_id AND m.arm = s.arm AND m.rep = s.rep")" -ge "$steps" ] ||
	fail "steps not tied to their measurements"
# Every step squeue showed is journaled.
for s in $(sort -u "$W/seen"); do
	[ "$(q "SELECT count(*) FROM slurm_steps WHERE step_id = '$s'")" = 1 ] || fail "step $s in squeue, not in the database"
done
echo "squeue saw $(sort -u "$W/seen" | wc -l) of them"
scontrol show job "$job" | grep -q "JobState=CANCELLED" || fail "the holding job was not cancelled"
slurm_none_left
sacct -j "$job" 2>&1 | head -1
echo PASS
