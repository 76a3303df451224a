#!/bin/sh
# The test cluster itself (tests/campaign/slurm_cluster.sh): a step runs with
# one fake GPU, and a step cancelled with scancel mid-run ends with its
# reason readable from scontrol. The executor's tests build on this.
set -eu
. "$RATCHET_SRC/tests/campaign/slurm_cluster.sh"
W=$(mktemp -d)
slurm_up "$W/cluster"
out=$(srun -n1 --gres=gpu:1 sh -c 'echo "$SLURM_JOB_ID.$SLURM_STEP_ID $CUDA_VISIBLE_DEVICES"')
echo "step: $out"
case "$out" in *" 0") ;; *) echo "FAIL: expected CUDA_VISIBLE_DEVICES=0 in the step, got '$out'"; exit 1 ;; esac
job=$(sbatch --parsable -o /dev/null --wrap 'srun sleep 60')
i=0
until squeue -h -j "$job" -s -o %i | grep -qE "^[0-9]+\.[0-9]+$"; do i=$((i + 1)); [ $i -lt 100 ] || { echo "FAIL: no step"; exit 1; }; sleep 0.1; done
step=$(squeue -h -j "$job" -s -o %i | grep -E "^[0-9]+\.[0-9]+$" | head -1)
scancel "$step"
i=0
until scontrol show job "$job" | grep -qE 'JobState=(COMPLETED|FAILED|CANCELLED)'; do i=$((i + 1)); [ $i -lt 200 ] || { scontrol show job "$job"; echo "FAIL: job did not end"; exit 1; }; sleep 0.1; done
scontrol show job "$job" | grep -E 'JobState|Reason' | head -2
echo "PASS"
