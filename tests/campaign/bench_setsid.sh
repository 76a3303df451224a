#!/bin/sh
# A build that starts a process in a session of its own (`setsid sleep &`,
# output redirected so that no pipe holds the run up) left it running after
# ratchet ended (issue 22, item 21). A build now leads a process tree (a
# cgroup, or /proc with ratchet as subreaper), and what it left running is
# stopped when it ends: after the campaign, no such process survives. (A
# measured benchmark does not lead a tree: it costs 30 to
# 240 ms per start here; they run under a keeper: bench_strays.sh.)
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
W=$(mktemp -d /tmp/ratchet-bench-setsid-XXXXXX)
# The sleep's length names this run's strays: 32.<pid>.
D="32.$$"
strays() { pgrep -f "^sleep $D\$" || true; }
cleanup() { for p in $(strays); do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$W"; }
trap cleanup EXIT
cd "$W"
. "$RATCHET_SRC/tests/campaign/common.sh"
echo 1 > speed.txt
echo 2 > fast.txt
cat > spec.yaml <<Y
name: bench-setsid
benchmarks:
  - name: app
    command: [sh, -c, 'printf "{\"v\": %s}" \$(cat speed.txt)']
    metrics: {v: {pointer: /v, better: higher}}
objective: {metric: app.v, goal: max, min_gain: 5%}
repeats: {min: 2, max: 2}
variants:
  - name: faster
    file: {target: speed.txt, source: fast.txt}
    build: [sh, -c, 'setsid sleep $D </dev/null >/dev/null 2>&1 & true']
Y
t0=$(date +%s)
run_ok spec.yaml
t=$(($(date +%s) - t0))
q "SELECT seq, variant, state FROM iterations"
[ "$(q "SELECT state FROM iterations WHERE variant = 'faster'")" = kept ] || { echo "FAIL: the change was not kept"; exit 1; }
[ $t -lt 25 ] || { echo "FAIL: the run took ${t}s: a stray held it up"; exit 1; }
sleep 0.5
left=$(strays)
[ -z "$left" ] || { ps -o pid,ppid,sid,args -p $(echo $left | tr ' ' ,); echo "FAIL: strays survived the run"; exit 1; }
echo "no build left a process behind (${t}s)"
echo PASS
