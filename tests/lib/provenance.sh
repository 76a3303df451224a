# Shared by the launch-provenance tests (tests/engine/provenance.sh,
# tests/engine/provenance_libs.sh): a scratch folder, and a campaign whose
# engine (simserve, however it is started) restarts for every sample, with a
# load benchmark and a `bump` benchmark that changes what the next launches
# record after a few runs; then the checks both make of the launches.
#   . "$RATCHET_SRC/tests/lib/provenance.sh"
#   prov_workdir PREFIX         set -eu checks, W=/tmp/PREFIX-XXXXXX (kept with KEEP=1),
#                               cd there, tests/campaign/common.sh's q and run_ok
#   prov_spec NAME ENGINE BUMP  spec.yaml: ENGINE is the engine's own lines (command, env,
#                               provenance; YAML indented by 2), BUMP the shell line the
#                               bump benchmark runs with $n its runs before this one
#   prov_first_agree            the first launches (at least 2) are not flagged
#   prov_show_flagged [OPT...]  `show OPT...` of the first flagged launch's iteration, in show.out
prov_workdir() {
	set -eu
	: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
	command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
	W=$(mktemp -d "/tmp/$1-XXXXXX")
	trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
	cd "$W"
	. "$RATCHET_SRC/tests/campaign/common.sh"
}

prov_spec() {
	cat > spec.yaml <<Y
name: $1
engine:
$2
  ready: {http: /health, timeout: 10s}
  stop_grace: 1s
  restart: sample
benchmarks:
  - name: decode
    load: {concurrency: 2, prompt_tokens: 8, output_tokens: 4, requests: 4}
  - name: bump
    command: [sh, -c, "n=\$(cat n 2>/dev/null || echo 0); echo \$((n+1)) > n; $3; echo '{\"x\": 1}'"]
    metrics: {x: {pointer: /x, better: higher}}
objective: {metric: decode.output_throughput, goal: max, min_gain: 50%}
repeats: {min: 2, max: 2, interleave: false}
variants:
  - {name: g16, flag: [--max-graph-bs, "16"]}
Y
}

prov_first_agree() {
	n=$(q "SELECT count(*) FROM launches WHERE differs IS NULL")
	[ "$n" -ge 2 ] || { echo "FAIL: launches flagged before anything changed"; exit 1; }
}

prov_show_flagged() {
	it=$(q "SELECT iteration_id FROM launches WHERE differs IS NOT NULL LIMIT 1")
	seq=$(q "SELECT seq FROM iterations WHERE id = $it")
	"$RATCHET_BIN" --db c.db show "$@" "1:$seq" > show.out
}
