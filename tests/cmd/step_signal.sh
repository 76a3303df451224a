#!/bin/sh
# `ratchet __step` (the wrapper every Slurm step runs, runner/cmd/cmd_step.c)
# records in its .end the signal slurmstepd sent, without Slurm: real
# processes and signals. slurmstepd signals every process of a cancelled
# step, so the program may die of SIGTERM before the wrapper's own SIGTERM
# arrives; the .end must still say "signalled 15" (a fresh-clone CI run
# under ASan once wrote "signalled 0" there, and the runner took a cancelled
# job for the benchmark's own failure). A program that kills itself with
# SIGTERM is its own failure: "signalled 0". A SIGTERM sent to the wrapper
# alone is forwarded to the program.
set -u
R=${RATCHET_BIN:?}
. "$(dirname "$0")/lib.sh"
scratch stepsig
export SLURM_JOB_ID=7

# wait until FILE exists (at most 10 s)
await() {
	i=0
	while [ ! -s "$1" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -s "$1" ]
}

# 1. The step cancelled: the program gets SIGTERM first, the wrapper 0.3 s later.
SLURM_STEP_ID=1 "$R" __step steps -- sleep 30 &
w=$!
await steps/7.1.rec && ok "the launch record is written" || no "no launch record"
child=$(sed -n 's/^pid //p' steps/7.1.rec)
[ -n "$child" ] && kill -0 "$child" 2>/dev/null && ok "the record names the running program ($child)" ||
	no "the record's pid '$child' is not running"
kill -TERM "$child"
sleep 0.3
kill -TERM "$w"
wait "$w"
rc=$?
cat steps/7.1.end
grep -qx "signalled 15" steps/7.1.end && ok "the program died first, the .end still says signalled 15" ||
	no "the .end lost slurmstepd's signal: $(tr '\n' ' ' <steps/7.1.end)"
grep -qx "status 15" steps/7.1.end && ok "the program's wait status is its SIGTERM" || no "wrong wait status"
[ $rc -eq 143 ] && ok "the wrapper ends as the program did (143)" || no "the wrapper exited $rc, want 143"

# 2. The program kills itself: its own failure, after the wait for a signal.
SLURM_STEP_ID=2 "$R" __step steps -- sh -c 'kill -TERM $$'
rc=$?
cat steps/7.2.end
grep -qx "signalled 0" steps/7.2.end && ok "a program's own SIGTERM is not taken for a cancel" ||
	no "a self-inflicted SIGTERM was recorded as slurmstepd's"
[ $rc -eq 143 ] && ok "exit 143" || no "exit $rc, want 143"

# 3. The wrapper alone signalled: it forwards to the program.
SLURM_STEP_ID=3 "$R" __step steps -- sleep 30 &
w=$!
await steps/7.3.rec || no "no launch record for step 3"
child=$(sed -n 's/^pid //p' steps/7.3.rec)
kill -TERM "$w"
wait "$w"
cat steps/7.3.end
grep -qx "signalled 15" steps/7.3.end && ok "the wrapper's SIGTERM is recorded" || no "the wrapper's SIGTERM is not recorded"
grep -qx "status 15" steps/7.3.end && ok "and forwarded: the program died of it" || no "the program did not get the SIGTERM"
kill -0 "$child" 2>/dev/null && no "the program outlived its step" || ok "no program is left running"
finish
