#!/bin/sh
# `vllm bench serve` as an external benchmark (issue 11), with a stand-in
# that writes vLLM's result file the way vLLM names it: the campaign finds
# the file each sample wrote (never an earlier one), through
#   vauto  no format_file: --save-result --result-dir, vLLM's own file name
#   vdir   format_file: a folder with {iteration}, made by the run
#   vglob  format_file: a glob with {iteration}
# and reads p95, std and goodput, usable in constraints. Each sample's
# request_throughput is unique (iteration, arm, rep) and logged by the
# stand-in; the store must hold exactly the logged values.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
. "${RATCHET_SRC:?}/tests/lib/common.sh"
scratch_dir ratchet-resultfile
cat > fakevllm.sh <<'S'
#!/bin/sh
# fakevllm.sh BENCH bench serve --save-result [--result-dir D] [--result-filename F]
bench=$1; shift
dir=.; name=
while [ $# -gt 0 ]; do
	case $1 in
	--result-dir) dir=$2; shift ;;
	--result-filename) name=$2; shift ;;
	esac
	shift
done
mkdir -p "$dir"
[ -n "$name" ] || name="openai-infqps-m-$(date +%Y%m%d-%H%M%S)-$$.json"
arm=0; [ "$RATCHET_ARM" = cand ] && arm=1
x=$((1000 * RATCHET_ITERATION + 100 * arm + RATCHET_REP + ${SPEED:-0}))
echo "$bench $RATCHET_ITERATION $RATCHET_ARM $RATCHET_REP $x" >> "$(dirname "$0")/ledger"
printf '{"request_throughput": %s, "request_goodput": 3.5, "completed": 10, "failed": 0,
 "mean_ttft_ms": 100.0, "median_ttft_ms": 90.0, "std_ttft_ms": 12.0, "p90_ttft_ms": 150.0,
 "p95_ttft_ms": 180.0, "p99_ttft_ms": 250.0}\n' "$x" > "$dir/$name"
S
chmod +x fakevllm.sh
cat > spec.yaml <<'Y'
name: resultfile
benchmarks:
  - name: vauto
    command: ["{workdir}/fakevllm.sh", vauto, bench, serve, --save-result, --result-dir, "{workdir}/res"]
    format: vllm-bench-serve
  - name: vdir
    command: ["{workdir}/fakevllm.sh", vdir, bench, serve, --save-result, --result-dir, "{workdir}/out/{iteration}"]
    format: vllm-bench-serve
    format_file: "out/{iteration}"
  - name: vglob
    command: ["{workdir}/fakevllm.sh", vglob, bench, serve, --save-result, --result-dir, "{workdir}/g",
              --result-filename, "r-{iteration}-x.json"]
    format: vllm-bench-serve
    format_file: "g/r-{iteration}-*.json"
objective: {metric: vauto.request_throughput, goal: max, min_gain: 1%}
constraints:
  - vdir.ttft_p95 <= 1s
  - vglob.goodput >= 1
repeats: {min: 2, max: 2}
variants:
  - {name: faster, env: {SPEED: "50"}}
Y
"$RATCHET_BIN" check --preflight spec.yaml > /dev/null
rc=0
"$RATCHET_BIN" --db c.db run --quiet spec.yaml > run.out 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat run.out; echo "FAIL: run exited $rc"; exit 1; }
sqlite3 c.db "SELECT m.benchmark || ' ' || i.seq || ' ' || m.arm || ' ' || m.rep || ' ' || CAST(m.value AS INTEGER)
	FROM measurements m JOIN iterations i ON i.id = m.iteration_id
	WHERE m.metric = 'request_throughput' ORDER BY 1" > stored
sort ledger > logged
diff logged stored || { echo "FAIL: the stored samples are not the files each sample wrote"; exit 1; }
echo "$(wc -l < stored) samples, each read from the file it wrote"
for m in ttft_p95 ttft_p90 ttft_std goodput; do
	v=$(sqlite3 c.db "SELECT value FROM measurements WHERE benchmark='vdir' AND metric='$m' LIMIT 1")
	[ -n "$v" ] || { echo "FAIL: $m not read"; exit 1; }
done
[ "$(sqlite3 c.db "SELECT value FROM measurements WHERE benchmark='vdir' AND metric='ttft_p95' LIMIT 1")" = 0.18 ] ||
	{ echo "FAIL: ttft_p95 not in seconds"; exit 1; }
[ "$(sqlite3 c.db "SELECT state FROM iterations WHERE variant='faster'")" = kept ] ||
	{ echo "FAIL: the faster variant was not kept"; exit 1; }
echo PASS
