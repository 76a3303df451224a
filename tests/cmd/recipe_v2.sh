#!/bin/sh
# `ratchet recipe` v2 (docs/replay.md, issue 26; issue 22 items 8, 9, 14, 17).
# A space campaign over a template whose build makes the file the benchmark
# reads (U:1 gives 1, U:8 gives 8) keeps U:8. Its recipe:
#   - apply.sh runs the generated change's build on a fresh copy (item 9:
#     without it the copy gives 1);
#   - run.sh, run from the copy or given it, serves the copy's files: the
#     benchmark prints the copy's marker.txt;
#   - spec.yaml, installed by apply.sh as ratchet-recipe.yaml, re-runs the
#     benchmark on the best configuration and measures the campaign's best
#     figure; variants.yaml holds the kept change with its lineage, and
#     `ratchet replay --from variants.yaml` reads it;
#   - a newline in the campaign's name stays inside the comments (item 14);
#   - a stored path with ".." never makes the recipe write outside -o DIR,
#     and -o is normalised (item 8);
#   - stored bytes that do not match their sha256 are refused (item 17).
set -u
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}"
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
scratch recipe-v2
W=$tmp
mkdir wd
printf '{{U}}\n' > wd/k.in
echo 1 > wd/k.txt && echo 1 > wd/built.txt && echo orig > wd/marker.txt
cat > wd/bench.sh <<'S'
printf '{"gflops": %s, "marker": "%s"}\n' "$(cat built.txt)" "$(cat marker.txt)"
S
cp -a wd pristine
cat > wd/spec.yaml <<'Y'
name: recipe-v2
benchmarks:
  - name: app
    command: [sh, bench.sh]
    metrics: {gflops: /gflops}
objective: {metric: app.gflops, goal: max, min_gain: 5%}
repeats: {min: 3, max: 3}
strategy: coordinate
space:
  parameters:
    - {name: U, values: [1, 8], template: {source: k.in, target: k.txt, build: [sh, -c, "cp k.txt built.txt"]}}
Y
"$RATCHET_BIN" --db c.db run --quiet wd/spec.yaml > run.out 2>&1 || { cat run.out; no "the space campaign"; }
best=$(sqlite3 c.db "SELECT obj_cand FROM iterations WHERE id = (SELECT best_iteration FROM campaigns WHERE id = 1)")
[ "$(cat wd/built.txt)" = 8 ] && ok "the campaign kept U:8 (best $best)" || no "U:8 not kept ($(cat wd/built.txt))"
"$RATCHET_BIN" --db c.db recipe -o rec > recipe.out 2>&1 || { cat recipe.out; no "recipe"; }
cat rec/apply.sh rec/run.sh rec/variants.yaml
# item 9 and run.sh: a fresh copy with its own marker, the scripts run from elsewhere
cp -a pristine copy && echo copy > copy/marker.txt
(cd / && sh "$W/rec/apply.sh" "$W/copy") > apply.out 2>&1 || { cat apply.out; no "apply.sh"; }
[ "$(cat copy/k.txt)" = 8 ] && [ "$(cat copy/built.txt)" = 8 ] && ok "apply.sh ran the generated change's build" ||
	no "the copy's k.txt $(cat copy/k.txt), built.txt $(cat copy/built.txt)"
out=$(cd copy && sh ../rec/run.sh)
echo "$out" | grep -q '"gflops": 8, "marker": "copy"' && ok "run.sh from the copy serves the copy's files: $out" ||
	no "run.sh from the copy printed: $out"
out=$(cd / && sh "$W/rec/run.sh" "$W/copy")
echo "$out" | grep -q '"marker": "copy"' && ok "run.sh given the copy serves it" || no "run.sh COPY printed: $out"
# spec.yaml re-runs the benchmark on the best configuration
[ -f copy/ratchet-recipe.yaml ] && ok "apply.sh installed the recipe's spec" || no "no copy/ratchet-recipe.yaml"
"$RATCHET_BIN" --db r.db run --quiet copy/ratchet-recipe.yaml > rerun.out 2>&1 || { cat rerun.out; no "the recipe's spec did not run"; }
again=$(sqlite3 r.db "SELECT obj_best FROM iterations WHERE kind = 'baseline' AND state = 'baseline'")
awk -v a="$again" -v b="$best" 'BEGIN { d = a / b - 1; exit !(d < 0.05 && d > -0.05) }' &&
	ok "the recipe's spec measures $again, the campaign's best $best" || no "the recipe's spec measures '$again', the best $best"
[ "$(sqlite3 r.db "SELECT workdir FROM campaigns")" = "$W/copy" ] && ok "its workdir is the copy" || no "its workdir"
# variants.yaml: the kept change with its lineage, replay's input
grep -q "seq: " rec/variants.yaml && grep -q 'campaign: 1' rec/variants.yaml && ok "variants.yaml has the lineage" ||
	no "variants.yaml lacks the lineage"
cp -a pristine copy2
sed "s|^workdir: .*||" copy/ratchet-recipe.yaml > copy2/base.yaml
rc=0; "$RATCHET_BIN" --db c.db replay --quiet --from rec/variants.yaml copy2/base.yaml > replay.out 2>&1 || rc=$?
v=$(sqlite3 c.db "SELECT verdict || '@' || from_campaign || ':' || from_seq FROM replay_levers")
seq=$(sqlite3 c.db "SELECT seq FROM iterations WHERE id = (SELECT best_iteration FROM campaigns WHERE id = 1)")
[ $rc -eq 0 ] && [ "$v" = "held@1:$seq" ] && ok "replay --from variants.yaml: $v" || { cat replay.out; no "replay of variants.yaml: $v ($rc)"; }
# item 14: a newline in the campaign's name
sqlite3 c.db "UPDATE campaigns SET name = 'x' || char(10) || 'touch $W/pwned' || char(10) || '#' WHERE id = 1"
"$RATCHET_BIN" --db c.db recipe --campaign 1 -o rec14 > /dev/null 2>&1 || no "recipe with a newline in the name"
cp -a pristine copy14
(sh rec14/apply.sh copy14 && cd copy14 && sh ../rec14/run.sh) > /dev/null 2>&1
[ ! -e "$W/pwned" ] && ! grep -q '^touch' rec14/apply.sh rec14/run.sh rec14/spec.yaml rec14/variants.yaml &&
	ok "a newline in the name stays in the comments" || no "the name escaped a comment"
sqlite3 c.db "UPDATE campaigns SET name = 'recipe-v2' WHERE id = 1"
# item 8: -o normalised; a stored path with .. stays inside DIR
mkdir sub
"$RATCHET_BIN" --db c.db recipe --campaign 1 -o sub/../rec8 > /dev/null 2>&1 && [ -f rec8/run.sh ] &&
	ok "-o sub/../rec8 wrote rec8" || no "-o sub/../rec8"
up=$(echo "$W" | sed 's|[^/][^/]*|..|g')
sqlite3 c.db "UPDATE originals SET path = '$W/wd$up/..$W/escape/k.txt' WHERE path = '$W/wd/k.txt';
              UPDATE intents SET path = '$W/wd$up/..$W/escape/k.txt' WHERE path = '$W/wd/k.txt'"
"$RATCHET_BIN" --db c.db recipe --campaign 1 -o rec8b > r8.out 2>&1 || { cat r8.out; no "recipe of a path with .."; }
[ ! -e "$W/escape" ] && [ -f "rec8b/files/_root$W/escape/k.txt" ] && ok "a stored path with .. is written under DIR/files/_root" ||
	{ ls -R rec8b; no "a stored path with .. escaped DIR"; }
# item 17: bytes that do not match their sha256
sqlite3 c.db "UPDATE blobs SET content = CAST('9' AS BLOB) WHERE CAST(content AS TEXT) = '8' || char(10)"
rc=0; "$RATCHET_BIN" --db c.db recipe --campaign 1 -o rec17 > r17.out 2>&1 || rc=$?
[ $rc -eq 3 ] && grep -q "damaged" r17.out && ok "damaged bytes refused: $(cat r17.out)" || { cat r17.out; no "damaged bytes ($rc)"; }
# a Dockerfile when the engine ran from an image: a stand-in docker that
# answers `image inspect` with a digest and runs the container's command
if [ -x "${RATCHET_BUILD:-}/simserve" ]; then
	mkdir bin dk
	cat > bin/docker <<'S'
#!/bin/sh
case "$1" in
image) echo "example/sim@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" ;;
run) shift; while [ "${1#-}" != "$1" ]; do shift; done; shift; exec "$@" ;;
*) exit 1 ;;
esac
S
	chmod +x bin/docker
	cat > dk/spec.yaml <<Y
name: docker
engine:
  command: [docker, run, --rm, "example/sim:1", "$RATCHET_BUILD/simserve", --port, "{port}", --nonce, "{nonce}",
            --decode-us-per-step, "400", --decode-us-per-seq, "50"]
  ready: {http: /health, timeout: 20s}
  identity: {http: /v1/models}
  stop_grace: 2s
benchmarks:
  - name: decode
    load: {api: completions, pattern: closed, concurrency: 16, prompt_tokens: 16,
           output_tokens: 8, requests: 32, ignore_eos: true, timeout: 5s}
objective: {metric: decode.output_throughput, goal: max, min_gain: 3%}
repeats: {min: 3, max: 4, confidence: 0.9}
variants:
  - name: step-100
    flag: [--decode-us-per-step, "100"]
  - name: graphs
    env: {SIMSERVE_MAX_GRAPH_BS: "64"}
strategy: list
Y
	PATH="$W/bin:$PATH" "$RATCHET_BIN" --db d.db run --quiet dk/spec.yaml > dk.out 2>&1 || { cat dk.out; no "the container campaign"; }
	"$RATCHET_BIN" --db d.db recipe -o recd > /dev/null 2>&1 || no "the container campaign's recipe"
	cat recd/Dockerfile 2>/dev/null
	step=400
	[ "$(sqlite3 d.db "SELECT state FROM iterations WHERE variant = 'step-100'")" = kept ] && step=100
	grep -q '^FROM example/sim@sha256:0123456789abcdef' recd/Dockerfile &&
		grep -q "^CMD \\[.*\"--port\", \"8000\", \"--nonce\", \"recipe\", \"--decode-us-per-step\", \"$step\"" recd/Dockerfile &&
		grep -q "Dockerfile" recd/README.txt &&
		ok "a Dockerfile FROM the image's digest with the kept flags (--decode-us-per-step $step)" || no "the Dockerfile"
	if [ "$(sqlite3 d.db "SELECT state FROM iterations WHERE variant = 'graphs'")" = kept ]; then
		grep -q '^ENV SIMSERVE_MAX_GRAPH_BS="64"' recd/Dockerfile && ok "its kept env" || no "the Dockerfile's env"
	fi
fi
finish
