#!/bin/sh
# The noise warning: a benchmark whose objective jumps by about +-20% from
# run to run, with min_gain 2%, is told at the baseline that its repeats
# cannot resolve min_gain (and the spread is a fact, objective.noise); a
# quiet one (every run the same) is not warned.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
W=$(mktemp -d /tmp/ratchet-noise-XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
cd "$W"
. "$RATCHET_SRC/tests/campaign/common.sh"
# run n gives 100, 80, 120, 100, 80, ... : MAD 20 over median 100
cat > spec.yaml <<'Y'
name: noisy
benchmarks:
  - name: b
    command: [sh, -c, "n=$(cat n 2>/dev/null || echo 0); echo $((n+1)) > n; echo \"{\\\"x\\\": $((100 + (n % 3 - 1) * 20))}\""]
    metrics: {x: /x}
objective: {metric: b.x, goal: max, min_gain: 2%}
repeats: {min: 3, max: 8}
variants:
  - {name: v, env: {X: "1"}}
max_iterations: 1
Y
"$RATCHET_BIN" --db c.db run --quiet spec.yaml > run.out 2>&1 || true
grep -q "warning: min_gain is below what the repeats can resolve on this host: b.x: 8 repeats per arm resolve about" run.out ||
	{ cat run.out; echo "FAIL: no noise warning"; exit 1; }
q "SELECT value FROM env_facts WHERE key = 'objective.noise'" | grep -q "min_gain 2.00%" ||
	{ q "SELECT key, value FROM env_facts"; echo "FAIL: the spread is not recorded"; exit 1; }
# a benchmark that does not vary: no warning
sed -i 's/(n % 3 - 1) \* 20/0/' spec.yaml
rm c.db
"$RATCHET_BIN" --db c.db run --quiet spec.yaml > run.out 2>&1 || true
if grep -q "warning: min_gain" run.out; then cat run.out; echo "FAIL: warned without noise"; exit 1; fi
echo PASS
