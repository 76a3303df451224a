#!/bin/sh
# A step killed with scancel mid-sample fails only that sample: the step is
# journaled as killed with the reason Slurm gives (this cluster keeps no
# accounting, so it comes from scontrol, or says so), the sample is measured
# again on a new step, and the campaign finishes with every sample it
# planned. A second kill of the same sample fails its iteration cleanly
# (the reason says so) and the campaign goes on to the end. The whole job
# cancelled mid-sample: a new allocation, the sample again, the campaign on.
set -eu
. "$RATCHET_SRC/tests/campaign/slurm_common.sh"
slurm_campaign "$W" 1500
slurm_start "$W"
victim=$(slurm_wait_step) || fail "no step ever ran"
scancel "$victim"
echo "cancelled step $victim"
rc=0
wait $runner || rc=$?
[ "$rc" -le 1 ] || fail "run exited $rc"
[ "$(q "SELECT state FROM campaigns")" = finished ] || fail "campaign not finished: $(q "SELECT state FROM campaigns")"
row=$(q "SELECT outcome || '|' || reason FROM slurm_steps WHERE step_id = '$victim'")
echo "journal: $row"
case "$row" in killed\|*"step $victim"*) ;; *) fail "step $victim not journaled as killed with a reason: $row" ;; esac
[ "$(q "SELECT count(*) FROM slurm_steps WHERE outcome = 'killed'")" = 1 ] || fail "more than one step killed"
# Only that sample failed: every planned sample is there, valid.
[ "$(q "SELECT count(*) FROM measurements WHERE benchmark = 'fake' AND metric = 'gflops' AND valid = 1")" = 6 ] ||
	fail "expected 6 samples, got $(q "SELECT count(*) FROM measurements WHERE benchmark = 'fake' AND metric = 'gflops'")"
[ "$(q "SELECT count(*) FROM iterations WHERE state = 'failed'")" = 0 ] || fail "an iteration failed"
[ "$(q "SELECT count(*) FROM slurm_steps WHERE outcome = 'ok'")" = 6 ] || fail "the retry is not journaled"
slurm_none_left

echo "--- two kills of one sample"
# Twice: the candidate's sample and its retry are killed; its iteration
# fails, and the campaign goes on to the end (the baseline's steps are .0
# and .1; the iteration's first is .2).
mkdir "$W/2"
slurm_campaign "$W/2" 1500
slurm_start "$W/2"
# past its launch: a step cancelled before it starts fails its sample from srun alone
first=$(slurm_wait_step 2) || fail "the iteration's step never ran"
scancel "$first"
s=$(slurm_wait_step 2 "$first") || fail "no retry step"
scancel "$s"
echo "cancelled steps $first and $s"
rc=0
wait $runner || rc=$?
W="$W/2"
echo "run exited $rc; iteration 1: $(q "SELECT state || ': ' || reason FROM iterations WHERE seq = 1")"
[ "$rc" -le 1 ] || fail "run exited $rc"
[ "$(q "SELECT count(*) FROM slurm_steps WHERE outcome = 'killed'")" = 2 ] || fail "two killed steps expected"
[ "$(q "SELECT state FROM iterations WHERE seq = 1")" = failed ] || fail "iteration 1 should have failed"
case "$(q "SELECT reason FROM iterations WHERE seq = 1")" in *"step $s"*) ;; *) fail "the failed iteration does not name step $s" ;; esac
[ "$(q "SELECT state FROM campaigns")" = finished ] || fail "the campaign did not go on to its end"
slurm_none_left

# The whole job cancelled mid-sample (as a time limit, a preemption or a node
# failure ends it): the step's reason is the job's state from scontrol, the
# job is journaled gone, a new allocation is obtained, the sample measured
# again on it, and the campaign finishes.
echo "--- the holding job cancelled"
W=${W%/2}
mkdir "$W/3"
slurm_campaign "$W/3" 1500
slurm_start "$W/3"
st=$(slurm_wait_step 1) || fail "no second step ever ran"
job=${st%%.*}
scancel "$job"
echo "cancelled job $job during step $st"
rc=0
wait $runner || rc=$?
[ "$rc" -le 1 ] || fail "run exited $rc: $(cat "$W/run.err")"
W="$W/3"
[ "$(q "SELECT state FROM campaigns")" = finished ] || fail "campaign not finished"
row=$(q "SELECT outcome || '|' || reason FROM slurm_steps WHERE step_id = '$st'")
echo "journal: $row"
case "$row" in "killed|step $st ended with its job $job: JobState=CANCELLED"*) ;; *) fail "step $st: $row" ;; esac
[ "$(q "SELECT state FROM slurm_jobs WHERE job_id = '$job'")" = gone ] || fail "job $job not journaled gone"
[ "$(q "SELECT count(*) FROM slurm_jobs WHERE state = 'released'")" = 1 ] || fail "no second allocation: $(q "SELECT job_id, state FROM slurm_jobs")"
[ "$(q "SELECT count(*) FROM measurements WHERE benchmark = 'fake' AND metric = 'gflops' AND valid = 1")" = 6 ] || fail "samples missing"
slurm_none_left
echo PASS
