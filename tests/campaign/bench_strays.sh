#!/bin/sh
# A measured command benchmark that leaves processes running (issue 22,
# item 21): in its group (`&`, nohup), in a session of its own (setsid,
# setsid -f, a setsid'd shell with a child of its own), or orphaned by a
# double fork. Each start runs under a keeper (runner/base/rt_keep.c), which
# kills all of them when the benchmark exits; and when the benchmark times
# out, too. After the runs, no such process survives.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
command -v setsid >/dev/null || { echo "setsid missing (util-linux)"; exit 1; }
W=$(mktemp -d /tmp/ratchet-bench-strays-XXXXXX)
# The sleep's length names this run's strays: 33.<pid>.
D="33.$$"
strays() { pgrep -f "^sleep $D\$" || true; }
cleanup() { for p in $(strays); do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$W"; }
trap cleanup EXIT
cd "$W"
. "$RATCHET_SRC/tests/campaign/common.sh"
echo 1 > speed.txt
echo 2 > fast.txt
Q='</dev/null >/dev/null 2>&1'
cat > bench.sh <<S
#!/bin/sh
sleep $D $Q &
nohup sleep $D $Q &
setsid sleep $D $Q &
setsid -f sleep $D $Q
setsid sh -c 'sleep $D & exec sleep $D' $Q &
sh -c 'setsid sleep $D $Q & exit 0'
sh -c '(sh -c "sleep $D $Q &") &'
sleep 0.1
printf '{"v": %s}' \$(cat speed.txt)
S
chmod +x bench.sh
cat > spec.yaml <<Y
name: bench-strays
benchmarks:
  - name: app
    command: [./bench.sh]
    metrics: {v: {pointer: /v, better: higher}}
objective: {metric: app.v, goal: max, min_gain: 5%}
repeats: {min: 2, max: 2}
variants:
  - name: faster
    file: {target: speed.txt, source: fast.txt}
Y
t0=$(date +%s)
run_ok spec.yaml
t=$(($(date +%s) - t0))
[ "$(q "SELECT state FROM iterations WHERE variant = 'faster'")" = kept ] || { cat run.out; echo "FAIL: the change was not kept"; exit 1; }
sleep 0.3
left=$(strays)
[ -z "$left" ] || { ps -o pid,ppid,sid,pgid,args -p $(echo $left | tr ' ' ,); echo "FAIL: $(echo $left | wc -w) strays of a measured benchmark survived the run"; exit 1; }
echo "no measured benchmark left a process behind (${t}s)"

# A benchmark that times out: its strays go with it.
cat > slow.sh <<S
#!/bin/sh
setsid sleep $D $Q &
sh -c 'setsid sleep $D $Q & exit 0'
exec sleep $D
S
chmod +x slow.sh
sed -e 's|\./bench.sh\]|./slow.sh]\n    timeout: 1s|' -e 's/bench-strays/bench-strays-slow/' spec.yaml > slow.yaml
rc=0
"$RATCHET_BIN" --db c2.db run --quiet slow.yaml > slow.out 2>&1 || rc=$?
grep -qi "timed out\|timeout" slow.out || { cat slow.out; echo "FAIL: the slow benchmark did not time out (exit $rc)"; exit 1; }
sleep 0.3
left=$(strays)
[ -z "$left" ] || { ps -o pid,ppid,sid,pgid,args -p $(echo $left | tr ' ' ,); echo "FAIL: strays of a timed-out benchmark survived"; exit 1; }
echo "a timed-out benchmark left nothing behind (exit $rc)"

# The runner killed with -9 in the middle of a sample: nothing can stop the
# benchmark but its keeper, which the kernel tells of the runner's death.
sed -e 's|\./bench.sh\]|./slow.sh]|' -e 's/bench-strays/bench-strays-kill9/' spec.yaml > k9.yaml
"$RATCHET_BIN" --db c3.db run --quiet k9.yaml > k9.out 2>&1 &
R=$!
for _ in $(seq 100); do [ "$(strays | wc -l)" -ge 3 ] && break; sleep 0.1; done
[ "$(strays | wc -l)" -ge 3 ] || { cat k9.out; echo "FAIL: the benchmark never started its processes"; exit 1; }
kill -9 $R
wait $R 2>/dev/null || true
# the keeper's grace (1 s) from the forwarded SIGTERM to SIGKILL, and its sweep
for _ in $(seq 50); do [ -z "$(strays)" ] && break; sleep 0.1; done
left=$(strays)
[ -z "$left" ] || { ps -o pid,ppid,sid,pgid,args -p $(echo $left | tr ' ' ,); echo "FAIL: $(echo $left | wc -w) processes of a benchmark outlived a runner killed with -9"; exit 1; }
echo "a runner killed with -9 left no benchmark process behind"
echo PASS
