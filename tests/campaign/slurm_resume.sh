#!/bin/sh
# kill -9 of the runner mid-sample, then `ratchet run --resume`: the resumed
# runner re-attaches to its holding job still running (the same job id, no
# new sbatch), cancels the step the killed runner left running, cancels an
# orphaned job of the same campaign, finishes the campaign, and leaves no
# job behind in squeue. A job whose id the journal holds but that is not the
# campaign's (no comment ratchet-campaign-CID-CREATED, or another user's:
# after a cluster state reset ids are reused; issue 22, item 13) is neither
# re-attached to nor cancelled: it runs on, and its row ends "gone".
set -eu
. "$RATCHET_SRC/tests/campaign/slurm_common.sh"
slurm_campaign "$W" 1500
slurm_start "$W"
st=$(slurm_wait_step 1) || fail "no second step ever ran"
kill -9 $runner
wait $runner 2>/dev/null || true
job=$(q "SELECT job_id FROM slurm_jobs")
echo "runner killed during step $st of job $job"
squeue -h -j "$job" -o %T | grep -q RUNNING || fail "the holding job did not outlive the runner"
# An orphan: another held job of the campaign, journaled but not the newest.
ours="ratchet-campaign-1-$(q "SELECT created_at FROM campaigns")"
squeue -h -j "$job" -o %k | grep -qx "$ours" || fail "the holding job's comment is not $ours: $(squeue -h -j "$job" -o %k)"
orphan=$(sbatch --parsable -o /dev/null --comment="$ours" --wrap 'exec sleep 600')
q "INSERT INTO slurm_jobs (campaign_id, job_id, state, created_at) VALUES (1, '$orphan', 'held', 0)"
q "UPDATE slurm_jobs SET id = 100 WHERE job_id = '$job'" # the runner's own job
# The newest row names someone else's job (as after a state reset).
foreign=$(sbatch --parsable -o /dev/null --job-name=ratchet-slurmc --wrap 'exec sleep 600')
q "INSERT INTO slurm_jobs (id, campaign_id, job_id, state, created_at) VALUES (200, 1, '$foreign', 'held', 0)"
rc=0
(cd "$W" && "$RATCHET_BIN" --db c.db run --resume spec.yaml >"$W/run.out" 2>"$W/run.err") || rc=$?
[ "$rc" -le 1 ] || fail "resume exited $rc"
grep -q "re-attached to slurm job $job" "$W/run.out" "$W/run.err" || fail "no re-attach line in the output"
[ "$(q "SELECT state FROM campaigns")" = finished ] || fail "campaign not finished"
[ "$(q "SELECT count(*) FROM slurm_jobs")" = 3 ] || fail "resume obtained a new allocation instead of re-attaching: $(q "SELECT job_id, state FROM slurm_jobs")"
[ "$(q "SELECT state FROM slurm_jobs WHERE job_id = '$job'")" = released ] || fail "job $job not released"
[ "$(q "SELECT state FROM slurm_jobs WHERE job_id = '$orphan'")" = cancelled ] || fail "orphan $orphan not cancelled"
scontrol show job "$orphan" | grep -q JobState=CANCELLED || fail "orphan $orphan still runs"
squeue -h -j "$foreign" -o %T | grep -Eq "RUNNING|PENDING" || fail "the foreign job $foreign was cancelled"
[ "$(q "SELECT state FROM slurm_jobs WHERE job_id = '$foreign'")" = gone ] || fail "the foreign job's row is not gone"
grep -q "slurm job $foreign is not this campaign's" "$W/run.out" "$W/run.err" || fail "the foreign job is not named"
[ "$(q "SELECT count(*) FROM slurm_steps WHERE step_id LIKE '$foreign.%'")" = 0 ] || fail "steps ran in the foreign job"
scancel "$foreign"
row=$(q "SELECT outcome || '|' || coalesce(reason, '') FROM slurm_steps WHERE step_id = '$st'")
echo "the killed runner's step: $row"
case "$row" in killed\|*) ;; *) fail "step $st not journaled as killed: $row" ;; esac
[ "$(q "SELECT count(*) FROM slurm_steps WHERE step_id LIKE '$job.%' AND iteration_id IS NOT NULL AND outcome = 'ok'")" -ge 6 ] || fail "resumed samples did not run on job $job"
slurm_none_left
echo PASS
