#!/bin/sh
# No silent limits in a measurement: a spec with 17 benchmarks and 65 log
# events runs every benchmark and counts every event (the loop once kept 16
# and 64 of them in fixed arrays and dropped the rest without a word).
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
[ -x "$RATCHET_BUILD/simserve" ] || { echo "simserve not built"; exit 1; }
. "${RATCHET_SRC:?}/tests/lib/common.sh"
scratch_dir ratchet-limits
cp "$RATCHET_SRC/tests/campaign/table.json" .
{
	echo "name: limits"
	echo "engine:"
	echo "  command: [\"$RATCHET_BUILD/simserve\", --port, \"{port}\", --nonce, \"{nonce}\", --model, limits]"
	echo "  ready: {http: /health, timeout: 10s}"
	echo "  stop_grace: 1s"
	echo "benchmarks:"
	for i in $(seq -w 1 17); do
		echo "  - {name: b$i, command: [\"$RATCHET_BUILD/fakebench\", \"{workdir}/table.json\"], metrics: {gflops: {pointer: /gflops, better: higher}}}"
	done
	echo "objective: {metric: b17.gflops, goal: max, min_gain: 2%}"
	echo "repeats: {min: 2, max: 2}"
	echo "log_events:"
	# every engine logs that it listens: each counter is at least 1
	for i in $(seq -w 1 65); do
		echo "  e$i: \"listening\""
	done
	echo "variants:"
	echo "  - {name: m64-32, table: {file: table.json, set: {M_LE_64: {tile: 32}}}}"
} > spec.yaml
"$RATCHET_BIN" check spec.yaml > /dev/null
. "$RATCHET_SRC/tests/campaign/common.sh"
run_ok spec.yaml
q "SELECT seq, variant, state, reason FROM iterations ORDER BY seq"
n=$(q "SELECT count(DISTINCT benchmark) FROM measurements WHERE benchmark NOT IN ('log', 'engine', 'telemetry')")
[ "$n" -eq 17 ] || { echo "FAIL: $n of 17 benchmarks were measured"; exit 1; }
n=$(q "SELECT count(DISTINCT metric) FROM measurements WHERE benchmark = 'log'")
[ "$n" -eq 65 ] || { echo "FAIL: $n of 65 log events were counted"; exit 1; }
n=$(q "SELECT count(*) FROM measurements WHERE benchmark = 'log' AND metric = 'e65' AND value >= 1")
[ "$n" -gt 0 ] || { echo "FAIL: the 65th log event never matched"; exit 1; }
# the objective is the 17th benchmark: the baseline has a median
b=$(q "SELECT obj_best > 0 FROM iterations WHERE seq = 0")
[ "$b" = 1 ] || { echo "FAIL: the baseline has no objective (b17 not run)"; exit 1; }
echo PASS
