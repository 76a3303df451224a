# Sourced by the Slurm executor's tests (slurm_steps.sh, slurm_scancel.sh,
# slurm_resume.sh, slurm_engine.sh): makes the test folder $W and starts a
# real test cluster in it (slurm_cluster.sh), then offers a campaign of the
# deterministic fakebench whose measurements run as Slurm steps.
#   slurm_campaign DIR SLEEP_MS   writes DIR/spec.yaml and DIR/table.json
#   q SQL                         one value from DIR's database
#   fail MSG                      prints FAIL and exits 1
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
. "$RATCHET_SRC/tests/campaign/slurm_cluster.sh"
set -eu
W=$(mktemp -d /tmp/ratchet-slurm-XXXXXX)
slurm_up "$W/cluster"
trap 'slurm_down; rm -rf "$W" 2>/dev/null || { sleep 1; rm -rf "$W"; }' EXIT
fail() { echo "FAIL: $*"; [ -z "${W:-}" ] || tail -5 "$W/run.err" 2>/dev/null; exit 1; }
q() { sqlite3 "$W/c.db" "$1"; }
slurm_campaign() {
	cp "$RATCHET_SRC/tests/campaign/table.json" "$1/"
	cat > "$1/spec.yaml" <<SPEC
name: slurmc
benchmarks:
  - name: fake
    command: ["$RATCHET_BUILD/fakebench", "{workdir}/table.json", "$2"]
    metrics: {gflops: {pointer: /gflops, better: higher}}
objective: {metric: fake.gflops, goal: max, min_gain: 2%}
repeats: {min: 2, max: 2, confidence: 0.95}
variants:
  - {name: m64-32, table: {file: table.json, set: {M_LE_64: {tile: 32}}}}
executor:
  kind: slurm
  slurm: {gres: "gpu:1", time: 10m, sbatch: ["--cpus-per-task=1"]}
SPEC
}
# Start the campaign in DIR $1 in the background; $runner is its pid.
slurm_start() {
	(cd "$1" && exec "$RATCHET_BIN" --db c.db run --quiet spec.yaml >"$W/run.out" 2>"$W/run.err") &
	runner=$!
}
# Wait for a running step J.N with N >= $1 (default 0) that is not $2, and
# 0.3 s more (past its launch: its launch record is written); prints its id.
slurm_wait_step() {
	i=0
	while :; do
		s=$(squeue -h -s -o %i 2>/dev/null |
		    awk -F. -v min="${1:-0}" -v not="${2:-}" '$2 ~ /^[0-9]+$/ && $2 + 0 >= min && $0 != not { print; exit }')
		[ -n "$s" ] && { sleep 0.3; echo "$s"; return 0; }
		i=$((i + 1)); [ $i -lt 600 ] || return 1
		sleep 0.05
	done
}
# Fail unless squeue empties within 10 s (a cancelled job is COMPLETING
# for a moment).
slurm_none_left() {
	i=0
	while [ -n "$(squeue -h -o %i)" ]; do
		i=$((i + 1)); [ $i -lt 100 ] || fail "jobs left in squeue: $(squeue -h)"
		sleep 0.1
	done
}
