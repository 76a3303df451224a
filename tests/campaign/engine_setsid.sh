#!/bin/sh
# An engine that starts a process in a new session (issue 17, item 3):
#   engine: {command: [sh, -c, 'setsid sleep 30 & exec simserve --port "$0"', "{port}"]}
# The setsid'd sleep leaves the engine's process group but holds its output
# pipe. Stopping the engine once waited for that pipe's EOF, so every sample
# lasted the sleep's whole life and SIGTERM to ratchet went unanswered
# meanwhile. Now every descendant is tracked (a cgroup where one can be made,
# else /proc with ratchet as their subreaper) and killed at stop, and the log
# reader never blocks without a deadline:
#   1. the campaign (6 engine launches) finishes in far less than one sleep,
#      and no sleep survives it;
#   2. SIGTERM while the engine runs stops ratchet within seconds (exit 3);
#   3. 1 again with the cgroup hierarchy read-only (the /proc path), when
#      this test runs as root and may unshare a mount namespace;
#   4. where launches get a cgroup: kill -9 of ratchet leaves its engine's
#      tree behind; the next ratchet that starts an engine kills it and
#      removes the cgroup.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
W=$(mktemp -d /tmp/ratchet-setsid-XXXXXX)
# The sleep's length names this run's grandchildren: 29.<our pid> seconds.
NAP="29.$$"
cleanup() { pkill -f "^sleep $NAP\$" 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT

spec() { # DIR
	mkdir "$1"
	cat > "$1/spec.yaml" <<Y
name: setsid
engine:
  command: [sh, -c, 'setsid sleep $NAP & exec $RATCHET_BUILD/simserve --port "\$0" --nonce "\$1"', "{port}", "{nonce}"]
  ready: {http: /health, timeout: 10s}
  stop_grace: 1s
benchmarks:
  - name: decode
    load: {concurrency: 2, prompt_tokens: 8, output_tokens: 16, requests: 20}
objective: {metric: decode.output_throughput, goal: max, min_gain: 50%}
repeats: {min: 2, max: 2}
variants:
  - {name: g16, flag: [--max-graph-bs, "16"]}
Y
}
leftover() { pgrep -f "^sleep $NAP\$" | wc -l; }

# 1. A whole campaign: 6 launches, each stop must not wait for the sleep.
campaign() { # DIR [WRAPPER...]
	d=$1
	shift
	spec "$d"
	cd "$d"
	t0=$(date +%s)
	rc=0
	timeout 25 "$@" "$RATCHET_BIN" --db c.db run --quiet spec.yaml > out 2> err || rc=$?
	t=$(($(date +%s) - t0))
	cat err
	[ $rc -eq 0 ] || { echo "FAIL: $d: ratchet run exited $rc after ${t}s (124: it hung on the engine's pipe)"; exit 1; }
	n=$(sqlite3 c.db "SELECT count(*) FROM iterations WHERE state IN ('baseline', 'kept', 'reverted')")
	[ "$n" -eq 2 ] || { echo "FAIL: $d: $n iterations decided, expected 2"; exit 1; }
	sleep 0.2
	[ "$(leftover)" -eq 0 ] || { echo "FAIL: $d: $(leftover) setsid'd sleeps outlived the campaign"; exit 1; }
	echo "$d: campaign in ${t}s, nothing left running"
	cd "$W"
}
campaign "$W/tree"

# 2. SIGTERM while the engine runs.
spec "$W/term"
cd "$W/term"
"$RATCHET_BIN" --db c.db run --quiet spec.yaml > out 2> err &
R=$!
i=0
while [ "$(sqlite3 c.db "SELECT count(*) FROM env_facts WHERE key='engine.pgid'" 2>/dev/null || echo 0)" -lt 1 ]; do
	i=$((i+1)); [ $i -lt 200 ] || { echo "FAIL: the engine never started"; exit 1; }; sleep 0.05
done
sleep 0.3
t0=$(date +%s)
kill -TERM $R
i=0
while kill -0 $R 2>/dev/null; do
	i=$((i+1))
	[ $i -lt 100 ] || { kill -9 $R; echo "FAIL: ratchet ignored SIGTERM for 10s while its engine's grandchild held the pipe"; exit 1; }
	sleep 0.1
done
rc=0
wait $R || rc=$?
cat err
[ $rc -eq 3 ] || { echo "FAIL: SIGTERM: exit $rc, expected 3"; exit 1; }
sleep 0.2
[ "$(leftover)" -eq 0 ] || { echo "FAIL: SIGTERM: $(leftover) setsid'd sleeps outlived ratchet"; exit 1; }
echo "sigterm: stopped in $(($(date +%s) - t0))s"
cd "$W"

# 3. Without a cgroup: /proc and the subreaper alone.
CG=$(findmnt -n -t cgroup2 -o TARGET 2>/dev/null | head -1 || true)
if [ "$(id -u)" -eq 0 ] && [ -n "$CG" ] && unshare -m true 2>/dev/null; then
	cat > "$W/nocg.sh" <<S
mount -o remount,bind,ro "$CG" || exit 1
exec "\$@"
S
	campaign "$W/proc" unshare -m sh "$W/nocg.sh"
else
	echo "skipped the /proc-only case: needs root, a cgroup2 mount and unshare -m"
fi
# 4. A tree left by a runner killed with -9.
if [ -n "$CG" ] && [ -w "$CG" ]; then
	spec "$W/k9"
	cd "$W/k9"
	"$RATCHET_BIN" --db c.db run --quiet spec.yaml > out 2> err &
	R=$!
	i=0
	while [ "$(leftover)" -lt 1 ]; do
		i=$((i+1)); [ $i -lt 200 ] || { cat err; echo "FAIL: the engine never started"; exit 1; }; sleep 0.05
	done
	ls -d "$CG/ratchet-$R-"* > /dev/null 2>&1 || { echo "FAIL: no cgroup for ratchet $R's engine"; exit 1; }
	kill -9 $R
	wait $R 2>/dev/null || true
	[ "$(leftover)" -ge 1 ] || { echo "FAIL: nothing outlived the runner (nothing to test)"; exit 1; }
	run_rc=0
	"$RATCHET_BIN" --db c.db run --quiet --resume spec.yaml > out 2> err || run_rc=$?
	[ $run_rc -eq 0 ] || { cat err; echo "FAIL: k9: --resume exited $run_rc"; exit 1; }
	sleep 0.2
	[ "$(leftover)" -eq 0 ] || { echo "FAIL: k9: $(leftover) sleeps of the killed runner's engine survive"; exit 1; }
	! ls -d "$CG/ratchet-$R-"* > /dev/null 2>&1 || { echo "FAIL: k9: the killed runner's cgroup remains"; exit 1; }
	echo "k9: the killed runner's engine tree was stopped and its cgroup removed"
	cd "$W"
else
	echo "skipped the kill -9 case: no writable cgroup2 hierarchy"
fi
echo PASS
