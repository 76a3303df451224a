#!/bin/sh
# `ratchet recipe` after a space campaign (issue 12): a coordinate search
# against simserve over three targets (a table entry, an environment
# variable and a flag) keeps generated points; the recipe applied to a fresh
# copy of the workdir gives the best's table bytes, and its run.sh, started
# with recipe_fp in place of the engine, gives exactly the configuration
# fingerprint the campaign recorded for its best.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_BUILD:?}" "${RATCHET_SRC:?}"
. "$RATCHET_SRC/tests/lib/decode_bench.sh"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
[ -x "$RATCHET_BUILD/simserve" ] && [ -x "$RATCHET_BUILD/recipe_fp" ] || { echo "SKIP: simserve or recipe_fp not built"; exit 77; }
W=$(mktemp -d /tmp/ratchet-search-recipe-XXXXXX)
trap 'rm -rf "$W"' EXIT
D="$W/wd"
mkdir "$D"
cat > "$D/tiles.json" <<'J'
{
  "decode.BS_LE_32": {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 2},
  "prefill.T_GT_512": {"BLOCK_M": 64, "BLOCK_N": 128, "num_warps": 8}
}
J
cp -a "$D" "$W/pristine"
PORT=$((20000 + ($$ + 7) % 20000))
cat > "$D/spec.yaml" <<Y
name: search-recipe
seed: 5
engine:
  command: ["$RATCHET_BUILD/simserve", --port, "$PORT", --model, sim-search, --tiles, "$D/tiles.json",
            --decode-us-per-step, "400", --decode-us-per-seq, "50"]
  port: $PORT
  ready: {http: /health, timeout: 20s}
  identity: {http: /v1/models, model: sim-search}
  stop_grace: 2s
$(decode_bench)
strategy: coordinate
space:
  parameters:
    - {name: BLOCK_M, values: [32, 64], table: {file: tiles.json, key: decode.BS_LE_32}}
    - {name: num_warps, values: [2, 4, 8], table: {file: tiles.json, key: decode.BS_LE_32}}
    - {name: GRAPH_BS, values: ["8", "64"], env: SIMSERVE_MAX_GRAPH_BS}
    - {name: STEP, values: ["400", "100"], flag: --decode-us-per-step}
Y
cd "$W"
q() { sqlite3 c.db "$1"; }
rc=0
"$RATCHET_BIN" --db c.db run --quiet --max-iterations 16 "$D/spec.yaml" > run.out 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat run.out; echo "FAIL: ratchet run exited $rc"; exit 1; }
q "SELECT seq, variant, state FROM iterations ORDER BY seq"
kept=$(q "SELECT count(*) FROM iterations i JOIN proposals p ON p.iteration_id = i.id WHERE i.state = 'kept'")
[ "$kept" -ge 1 ] || { echo "FAIL: no generated point kept"; exit 1; }
"$RATCHET_BIN" --db c.db recipe -o rec > recipe.out || { cat recipe.out; echo "FAIL: recipe"; exit 1; }
cat recipe.out rec/run.sh
best=$(q "SELECT config_sha256 FROM iterations WHERE id = (SELECT best_iteration FROM campaigns WHERE id = 1)")
grep -q "configuration fingerprint $best" rec/README.txt || { echo "FAIL: README lacks the fingerprint"; exit 1; }
# a fresh copy of the workdir, as it was before the campaign, at the same path
mv "$D" "$W/campaign-wd"
cp -a "$W/pristine" "$D"
sh rec/apply.sh "$D"
cmp "$D/tiles.json" "$W/campaign-wd/tiles.json" || { echo "FAIL: the applied table differs from the best's"; exit 1; }
# run.sh with recipe_fp in place of the engine: the fingerprint of what it starts
sed "s|^exec |exec '$RATCHET_BUILD/recipe_fp' |" rec/run.sh > fp.sh
names=$(sed -n 's/^\(export\|unset\) \([A-Za-z_][A-Za-z0-9_]*\).*/\2/p' rec/run.sh | tr '\n' ' ')
files=$(q "SELECT DISTINCT i.path FROM intents i JOIN iterations t ON t.id = i.iteration_id WHERE t.campaign_id = 1 AND t.seq <= (SELECT seq FROM iterations WHERE id = (SELECT best_iteration FROM campaigns WHERE id = 1))")
got=$(cd "$D" && RECIPE_FP_FILES="$files" RECIPE_FP_ENV="$names" sh "$W/fp.sh")
[ "$got" = "$best" ] || { echo "FAIL: the recipe's configuration is $got, the campaign's best $best"; exit 1; }
echo "kept $kept generated points; fingerprint $got (the campaign's best); env: ${names:-none}"
echo PASS
