#!/bin/sh
# A real engine end to end: llama.cpp's llama-server (tools/llama.sh's build
# in the cache, built by `make llama`) serving a random-weight llama made by
# experiments/llama-cpp/mkmodel.py, tuned by experiments/llama-cpp's
# campaign with its objective set to the engine's peak RSS (lower is
# better): on a 2-core host shared with other jobs the throughput of one
# sample swings by +-100%, while memory does not, so the decisions below
# hold anywhere. The baseline, a kept flag change (-c 2048 instead of 8192:
# a KV cache a quarter the size, 36.7 -> 30.2 MB here), a reverted one
# (-b 1024: the compute buffer follows -ub), the ggml-cpu patch rebuilt
# incrementally and measured (its launch maps another libggml-cpu, which
# provenance tells apart), the GSM8K gate with 0 failed requests, the
# version from /props, ready time and RSS recorded; then a second
# llama-server started by hand on the engine's port is refused by name.
# Exit 77 (skip, saying so) when no llama.cpp build is cached.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_GSM8K_DIR:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
# --check also configures a build made with older options again (llama.sh)
rc=0
bin=$(sh "$RATCHET_SRC/tools/llama.sh" --check) || rc=$?
[ $rc = 3 ] && { echo "SKIP: no llama.cpp build in the cache; 'make llama' builds one (tools/llama.sh)"; exit 77; }
[ $rc = 0 ] || { echo "FAIL: tools/llama.sh --check exited $rc"; exit 1; }
W=$(mktemp -d /tmp/ratchet-llama-XXXXXX)
SQ=
cleanup() {
	[ -z "$SQ" ] || kill "$SQ" 2>/dev/null || true
	wait 2>/dev/null || true
	[ -n "${KEEP:-}" ] || rm -rf "$W"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$W/run.out" ] && tail -30 "$W/run.out"; exit 1; }
q() { sqlite3 "$W/ratchet.db" "$1"; }
rebuildable=0
[ -f "$bin/../CMakeCache.txt" ] && [ -d "$bin/../../src/.git" ] && rebuildable=1
if [ $rebuildable = 1 ]; then
	# the patch variant edits the cached tree: one campaign at a time, and
	# the tree is clean before and after (revert restores it and rebuilds)
	src=$(cd "$bin/../../src" && pwd)
	exec 9>"$src/../patch.lock"
	flock 9
	[ -z "$(git -C "$src" status --porcelain --untracked-files=no)" ] || fail "$src has local changes"
else
	echo "NOTE: $bin has no build tree beside it (a static build made elsewhere): the ggml patch variant is left out"
fi
t0=$(date +%s)
SPEC_ONLY=1 LLAMA_BIN="$bin" GSM8K="$RATCHET_GSM8K_DIR/test.jsonl" \
	sh "$RATCHET_SRC/experiments/llama-cpp/run.sh" "$W" > "$W/run.out" 2>&1 || fail "run.sh exited $?"
# the objective: peak RSS; the variants: -c 2048 first, slots-8 left out
sed -i -e 's/^objective: .*/objective: {metric: engine.rss_peak, goal: min, min_gain: 5%}/' \
	-e '/^  - name: slots-8$/,/^    flag: /d' \
	-e 's/^variants:$/variants:\n  - name: ctx-2048\n    flag: [-c, "2048"]/' "$W/campaign.yaml"
grep -q "name: ctx-2048" "$W/campaign.yaml" && ! grep -q "name: slots-8" "$W/campaign.yaml" || fail "spec edit"
(cd "$W" && "$RATCHET_BIN" --db ratchet.db run --quiet campaign.yaml >> run.out 2>&1) || fail "the campaign exited $?"
echo "campaign: $(( $(date +%s) - t0 )) s"
q "SELECT seq, variant, state, substr(reason, 1, 160) FROM iterations ORDER BY seq"
st() { q "SELECT state FROM iterations WHERE variant = '$1'"; }
[ "$(st baseline)" = baseline ] || fail "baseline: $(st baseline)"
[ "$(st ctx-2048)" = kept ] || fail "ctx-2048 (a KV cache a quarter the size) not kept: $(st ctx-2048)"
[ "$(st batch-1024)" = reverted ] || fail "batch-1024 not reverted: $(st batch-1024)"
n=$(q "SELECT count(*) FROM measurements WHERE benchmark = 'decode' AND metric = 'failed' AND value > 0")
[ "$n" = 0 ] || fail "$n samples with failed requests"
for b in batched.s bench.tg_tps decode.output_throughput engine.ready_s; do
	n=$(q "SELECT count(*) FROM measurements WHERE benchmark || '.' || metric = '$b' AND value > 0")
	[ "$n" -gt 0 ] || fail "no $b measured"
done
n=$(q "SELECT count(*) FROM gate_runs")
[ "$n" -ge 2 ] || fail "the gate ran $n times (baseline and the kept change expected)"
n=$(q "SELECT count(*) FROM gate_runs WHERE n_failed > 0 OR passed IS NOT 1")
[ "$n" = 0 ] || fail "$n gate runs with failed requests or not passed"
q "SELECT verdict FROM gate_runs WHERE baseline_run_id IS NOT NULL" | grep -q "(responses [0-9.]*%)" ||
	fail "the gate's response-level identical rate is missing"
n=$(q "SELECT count(*) FROM launches WHERE version LIKE 'llama-server b%-80fb11a'")
[ "$n" -gt 0 ] || fail "the version from /props is not recorded"
q "SELECT extra FROM launches LIMIT 1" | grep -q "commit 80fb11a" || fail "llama.cpp's build is not in the provenance"
if [ $rebuildable = 1 ]; then
	st=$(st mul-mat-chunk-64)
	case $st in kept | reverted) ;; *) fail "the ggml patch was not measured: $st" ;; esac
	n=$(q "SELECT count(DISTINCT json_extract(libs, '\$.\"$bin/libggml-cpu.so.0.23.0\"')) FROM launches")
	[ "$n" = 2 ] || fail "the patched libggml-cpu is not told apart by provenance ($n sha256s)"
	# the patch touches ggml-cpu alone: libggml-base is the same bytes in every
	# launch, and no launch of the best configuration differs from the first
	# (ggml's own commit string used to follow git's index: tools/llama.sh)
	n=$(q "SELECT count(DISTINCT json_extract(libs, '\$.\"$bin/libggml-base.so.0.23.0\"')) FROM launches")
	[ "$n" = 1 ] || fail "libggml-base has $n sha256s over the launches, though the patch touches ggml-cpu only"
	n=$(q "SELECT count(*) FROM launches WHERE arm = 'best' AND differs IS NOT NULL")
	[ "$n" = 0 ] || fail "$n launches of the best configuration differ from the first: $(q "SELECT differs FROM launches WHERE differs IS NOT NULL LIMIT 1")"
	[ -z "$(git -C "$src" status --porcelain --untracked-files=no)" ] || [ "$st" = kept ] ||
		fail "the reverted patch left $src changed"
	git -C "$src" checkout -q -- . && cmake --build "$src/../build" -j 2 \
		--target llama-server llama-bench llama-batched-bench > "$W/restore.log" 2>&1 || fail "restoring $src"
fi
# A llama-server started by hand on a port, and a campaign whose engine
# must listen there: refused before anything is measured, naming it.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bin/llama-server" -m "$W/random-llama-q8_0.gguf" --host 127.0.0.1 --port "$port" -t 1 > "$W/squatter.log" 2>&1 &
SQ=$!
i=0
until grep -q "listening on" "$W/squatter.log"; do
	i=$((i + 1)); [ $i -lt 300 ] && kill -0 $SQ 2>/dev/null || fail "the hand-started llama-server did not start"
	sleep 0.1
done
sed "s/^  ready: /  port: $port\n  ready: /" "$W/campaign.yaml" > "$W/squat.yaml"
rc=0
(cd "$W" && "$RATCHET_BIN" --db squat.db run --quiet squat.yaml > squat.out 2>&1) || rc=$?
[ $rc = 2 ] || { cat "$W/squat.out"; fail "the squatted port gave exit $rc, want 2"; }
grep -q "port $port on 127.0.0.1 is already in use by pid $SQ (llama-server)" "$W/squat.out" ||
	{ cat "$W/squat.out"; fail "the refusal does not name the llama-server"; }
echo "PASS ($(( $(date +%s) - t0 )) s)"
