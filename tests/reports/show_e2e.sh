#!/bin/sh
# `ratchet show CAMPAIGN:SEQ` of a real simserve campaign whose engine
# restarts per sample (issue 23, item 4): the default is a summary (the
# objective's statistics and a count of the other metrics, no samples per
# arm, no environment, no provenance) that ends saying what --full adds;
# the six launches with one provenance are one block ("6 identical
# launches (3 best, 3 cand)"); the three candidate logs stored under one
# name read engine-cand-1.log .. engine-cand-3.log; --artifact of a
# numbered name prints that log byte for byte as the database holds it;
# --artifact engine-cand.log, which names all three, is refused (exit 2)
# with the candidates, where it used to pick one silently; --full keeps
# the full view: every metric, the samples, the environment, each launch.
set -u
: "${RATCHET_BIN:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
[ -x "$RATCHET_BUILD/simserve" ] || { echo "simserve not built"; exit 1; }
. "${RATCHET_SRC:?}/tests/lib/common.sh"
scratch_dir ratchet-show
status=0
no() { echo "FAIL: $*"; status=1; }
echo '{"decode.BS_LE_32": {"BLOCK_M": 32, "BLOCK_N": 64, "num_warps": 4}}' >tiles.json
cat >spec.yaml <<Y
name: show-e2e
engine:
  command: ["$RATCHET_BUILD/simserve", --port, "{port}", --nonce, "{nonce}", --model, sim-qwen,
            --tiles, "{workdir}/tiles.json", --decode-us-per-step, "100"]
  ready: {http: /health, timeout: 20s}
  identity: {http: /v1/models, model: sim-qwen}
  stop_grace: 2s
  restart: sample
benchmarks:
  - name: decode
    load: {concurrency: 4, prompt_tokens: 32, output_tokens: 16, requests: 16, ignore_eos: true}
objective: {metric: decode.output_throughput, goal: max, min_gain: 3%}
repeats: {min: 3, max: 3}
variants:
  - {name: le8, table: {file: tiles.json, set: {"decode.BS_LE_8": {BLOCK_M: 16, BLOCK_N: 64, num_warps: 4}}}}
strategy: list
Y
"$RATCHET_BIN" --db c.db run --quiet spec.yaml >run.out 2>&1 || { cat run.out; echo "FAIL: run"; exit 1; }
"$RATCHET_BIN" --db c.db show 1:1 >sum.txt 2>sum.err || { cat sum.err; echo "FAIL: show 1:1"; exit 1; }
"$RATCHET_BIN" --db c.db show 1:1 --full >full.txt 2>full.err || { cat full.err; echo "FAIL: show --full"; exit 1; }
cat sum.txt
has() { grep -qF -- "$2" "$1" || no "$1 lacks: $2"; }
hasnt() { ! grep -qF -- "$2" "$1" || no "$1 has: $2"; }

# The summary.
lines=$(wc -l <sum.txt)
[ "$lines" -le 40 ] || no "the summary is $lines lines (at most 40)"
has sum.txt "decode.output_throughput higher"
nstats=$(sqlite3 c.db "SELECT count(*) FROM metric_stats WHERE iteration_id=2")
has sum.txt "$((nstats - 1)) other metrics:"
has sum.txt "6 identical launches (3 best, 3 cand)"
[ "$(grep -c "identical launches" sum.txt)" = 1 ] || no "the launches are not one block"
hasnt sum.txt "measurements (valid samples"
grep -qx "environment" sum.txt && no "the summary has the environment"
hasnt sum.txt "executable"
has sum.txt "(a summary; show 1:1 --full adds every metric, the samples per arm, the environment and each launch's provenance)"

# Unique artifact names, in the order they were stored.
for k in 1 2 3; do has sum.txt "engine-cand-$k.log"; done
[ "$(sqlite3 c.db "SELECT count(*) FROM artifacts WHERE iteration_id=2 AND name='engine-cand.log'")" = 3 ] ||
	no "the campaign no longer stores three engine-cand.log (the test's premise)"
sqlite3 c.db "SELECT writefile('want.log', content) FROM artifacts WHERE iteration_id=2 AND name='engine-cand.log' ORDER BY id LIMIT 1 OFFSET 1" >/dev/null
"$RATCHET_BIN" --db c.db show 1:1 --artifact engine-cand-2.log >got.log || no "--artifact engine-cand-2.log failed"
cmp -s want.log got.log || no "--artifact engine-cand-2.log is not the second log stored"

# A name that several artifacts share is refused with the candidates.
rc=0
"$RATCHET_BIN" --db c.db show 1:1 --artifact engine-cand.log >amb.out 2>amb.err || rc=$?
[ $rc -eq 2 ] || no "--artifact engine-cand.log exited $rc, not 2"
[ -s amb.out ] && no "--artifact engine-cand.log printed a log"
has amb.err "'engine-cand.log' names 3 artifacts: engine-cand-1.log, engine-cand-2.log, engine-cand-3.log"
rc=0
"$RATCHET_BIN" --db c.db show 1:1 --artifact nope.log 2>none.err >/dev/null || rc=$?
[ $rc -eq 2 ] || no "--artifact nope.log exited $rc, not 2"
has none.err "it has: engine-cand-1.log, engine-cand-2.log, engine-cand-3.log"

# The full view keeps everything: every metric, each launch, provenance.
has full.txt "measurements (valid samples per metric and arm)"
has full.txt "environment"
has full.txt "executable   $RATCHET_BUILD/simserve"
[ "$(grep -c "^    cand, port" full.txt)" = 3 ] || no "--full does not list each candidate launch"
[ "$(grep -c "^  decode\." full.txt)" -ge "$nstats" ] || no "--full does not list every metric"
hasnt full.txt "(a summary;"
"$RATCHET_BIN" --db c.db --json show 1:1 | grep -q '"name": *"engine-cand-3.log"' || no "--json lacks the unique names"
[ $status -eq 0 ] && echo "ok: show's summary, collapsed launches, unique artifact names, --full"
exit $status
