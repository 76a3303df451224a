#!/bin/sh
# The executor: section of the spec (runner/spec/spec_exec.c): each mistake
# is refused by `ratchet check` with exit 2 and file:line:col, the key's path
# and what is wrong; a full slurm section and the short `executor: slurm`
# are accepted and dumped; a spec without the section dumps none.
set -u
: "${RATCHET_BIN:?}"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
pass=0 fail=0
base='name: x
benchmarks:
  - name: b
    command: [true]
    metrics: {m: {pointer: /m, better: higher}}
objective: {metric: b.m, goal: max}
'
bad() { # $1 the executor line, $2 the first line of stderr wanted
	printf '%s%s\n' "$base" "$1" > s.yaml
	"$RATCHET_BIN" check s.yaml >out 2>err
	rc=$?
	got=$(head -n 1 err)
	if [ $rc -ne 2 ] || [ "$got" != "$2" ]; then
		echo "FAIL '$1': exit $rc"; echo "  want: $2"; echo "  got:  $got"; fail=$((fail + 1))
	else pass=$((pass + 1)); fi
}
good() { # $1 the executor line, $2 a line the dump must hold
	printf '%s%s\n' "$base" "$1" > s.yaml
	if ! "$RATCHET_BIN" check s.yaml >out 2>err; then
		echo "FAIL '$1': refused: $(cat err)"; fail=$((fail + 1))
	elif ! grep -qxF -- "$2" out; then
		echo "FAIL '$1': dump lacks '$2':"; cat out; fail=$((fail + 1))
	else pass=$((pass + 1)); fi
}
bad 'executor: slurmm' "s.yaml:7:11: executor: unknown executor 'slurmm' (did you mean 'slurm'?)"
bad 'executor: [slurm]' "s.yaml:7:11: executor: expected a mapping, got a list"
bad 'executor: {kind: local, slurm: {gres: "gpu:1"}}' "s.yaml:7:32: executor.slurm: slurm settings with kind local (set kind: slurm)"
bad 'executor: {kind: slurm, slurm: {gres: "gpu 1"}}' "s.yaml:7:39: executor.slurm.gres: expected NAME[:TYPE][:COUNT] as sbatch --gres takes it (gpu:1), got 'gpu 1'"
bad 'executor: {kind: slurm, slurm: {gres: "gpu:"}}' "s.yaml:7:39: executor.slurm.gres: expected NAME[:TYPE][:COUNT] as sbatch --gres takes it (gpu:1), got 'gpu:'"
bad 'executor: {kind: slurm, slurm: {time: -5m}}' "s.yaml:7:39: executor.slurm.time: a duration cannot be negative, got '-5m'"
bad 'executor: {kind: slurm, slurm: {partiton: a}}' "s.yaml:7:33: executor.slurm: unknown key 'partiton' (did you mean 'partition'?)"
bad 'executor: {kind: slurm, slurm: {sbatch: "--exclusive"}}' "s.yaml:7:41: executor.slurm.sbatch: expected a list, got '--exclusive'"
bad 'executor: {kind: slurm, slurm: {partition: "a b"}}' "s.yaml:7:44: executor.slurm.partition: expected one word, got 'a b'"
bad 'executor: {kind: slurm, slurm: {account: ""}}' "s.yaml:7:42: executor.slurm.account: expected one word, got ''"
good 'executor: slurm' "  kind: slurm"
good 'executor: {kind: slurm, slurm: {partition: gpu, account: proj1, gres: "gpu:h200:1", time: 30m, sbatch: ["--exclusive"], srun: ["--cpu-bind=none"]}}' "    time: 1800"
grep -qxF "    gres: gpu:h200:1" out && grep -qxF "    sbatch: [--exclusive]" out || { echo "FAIL: full slurm dump"; cat out; fail=$((fail + 1)); }
good 'executor: local' "max_iterations: 0"
if grep -q executor out; then echo "FAIL: executor: local is dumped"; fail=$((fail + 1)); fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
