#!/bin/sh
# `ratchet recipe` end to end: a serving campaign against simserve keeps a
# table change (two entries, atomic), a flag and an env change; the recipe
# applied to a fresh copy of the workdir gives the best's table bytes, and
# its run.sh, started with recipe_fp in place of the engine, gives exactly
# the configuration fingerprint the campaign recorded for its best. A
# recipe is also written after `ratchet restore` (from the store alone),
# and a non-empty folder or a missing campaign is refused. A kept patch:
# the recipe holds it, files/ the patched bytes, and apply.sh runs its build.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_BUILD:?}" "${RATCHET_SRC:?}"
. "$RATCHET_SRC/tests/lib/decode_bench.sh"
. "$RATCHET_SRC/tests/lib/common.sh"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
[ -x "$RATCHET_BUILD/simserve" ] || { echo "SKIP: simserve not built"; exit 77; }
W=$(mktemp -d /tmp/ratchet-recipe-XXXXXX)
trap 'rm -rf "$W"' EXIT
D="$W/wd"
mkdir "$D"
cat > "$D/tiles.json" <<'J'
{
  "decode.BS_LE_32": {"BLOCK_M": 32, "BLOCK_N": 64, "num_warps": 4},
  "prefill.T_GT_512": {"BLOCK_M": 64, "BLOCK_N": 128, "num_warps": 8}
}
J
cp -a "$D" "$W/pristine"
PORT=$(free_port)
# no placeholders in the engine command: run.sh fills them, the fingerprint does not.
# Each change gains 30% or more (graphs +36%, step +246%, tiles +31% here, quiet),
# with rounds of 50 ms or more, so 4 tests at once on 2 cores do not flip one:
# the step 400 -> 100 us of before gained +13%, and was reverted under that load.
cat > "$D/spec.yaml" <<Y
name: recipe
engine:
  command: ["$RATCHET_BUILD/simserve", --port, "$PORT", --model, sim-recipe, --tiles, "$D/tiles.json",
            --decode-us-per-step, "20000", --decode-us-per-seq, "50", --prefill-us-per-token, "100"]
  port: $PORT
  ready: {http: /health, timeout: 20s}
  identity: {http: /v1/models, model: sim-recipe}
  stop_grace: 2s
$(decode_bench)
variants:
  - name: graphs-64
    env: {SIMSERVE_MAX_GRAPH_BS: "64"}
  - name: step-2000
    flag: [--decode-us-per-step, "2000"]
  - name: two-tiles
    table: {file: tiles.json, atomic: true,
            set: {"decode.BS_LE_8": {BLOCK_M: 16, BLOCK_N: 64, num_warps: 4},
                  "prefill.T_LE_512": {BLOCK_M: 64, BLOCK_N: 64, num_warps: 4}}}
strategy: list
Y
cd "$W"
q() { sqlite3 c.db "$1"; }
rc=0
"$RATCHET_BIN" --db c.db run --quiet "$D/spec.yaml" > run.out 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat run.out; echo "FAIL: ratchet run exited $rc"; exit 1; }
q "SELECT seq, variant, state, printf('%+.1f%%', 100 * obj_delta), change_text FROM iterations ORDER BY seq"
kept=$(q "SELECT group_concat(variant, ' ') FROM (SELECT variant FROM iterations WHERE state='kept' ORDER BY seq)")
[ "$kept" = "graphs-64 step-2000 two-tiles" ] || { echo "FAIL: kept '$kept', expected all three"; exit 1; }
"$RATCHET_BIN" --db c.db recipe -o rec > recipe.out || { cat recipe.out; echo "FAIL: recipe"; exit 1; }
cat recipe.out
cat rec/README.txt rec/apply.sh rec/run.sh
grep -q '^campaign 1: 3 kept changes, best 1:3; wrote 1 file and 0 patches to rec' recipe.out ||
	{ echo "FAIL: recipe's summary"; exit 1; }
best=$(q "SELECT config_sha256 FROM iterations WHERE id = (SELECT best_iteration FROM campaigns WHERE id = 1)")
grep -q "configuration fingerprint $best" rec/README.txt || { echo "FAIL: README lacks the fingerprint"; exit 1; }
grep -q '"prefill.T_LE_512"' rec/README.txt || { echo "FAIL: README lacks the kept entries"; exit 1; }
# a fresh copy of the workdir, as it was before the campaign, at the same path
mv "$D" "$W/campaign-wd"
cp -a "$W/pristine" "$D"
sh rec/apply.sh "$D"
cmp "$D/tiles.json" "$W/campaign-wd/tiles.json" || { echo "FAIL: the applied table differs from the best's"; exit 1; }
cmp -s "$D/tiles.json" "$W/pristine/tiles.json" && { echo "FAIL: apply.sh changed nothing"; exit 1; }
# run.sh with recipe_fp in place of the engine: the fingerprint of what it starts
sed "s|^exec |exec '$RATCHET_BUILD/recipe_fp' |" rec/run.sh > fp.sh
names=$(sed -n 's/^\(export\|unset\) \([A-Za-z_][A-Za-z0-9_]*\).*/\2/p' rec/run.sh | tr '\n' ' ')
[ "$names" = "SIMSERVE_MAX_GRAPH_BS " ] || { echo "FAIL: run.sh sets '$names'"; exit 1; }
files=$(q "SELECT DISTINCT i.path FROM intents i JOIN iterations t ON t.id = i.iteration_id WHERE t.campaign_id = 1 AND t.seq <= (SELECT seq FROM iterations WHERE id = (SELECT best_iteration FROM campaigns WHERE id = 1))")
got=$(cd "$D" && RECIPE_FP_FILES="$files" RECIPE_FP_ENV="$names" sh "$W/fp.sh")
[ "$got" = "$best" ] || { echo "FAIL: the recipe's configuration is $got, the campaign's best $best"; exit 1; }
echo "fingerprint: $got (the campaign's best)"
# from the store alone: after restore, the same recipe
rm -rf "$D" && mv "$W/campaign-wd" "$D"
"$RATCHET_BIN" --db c.db restore > /dev/null
cmp -s "$D/tiles.json" "$W/pristine/tiles.json" || { echo "FAIL: restore"; exit 1; }
"$RATCHET_BIN" --db c.db recipe --campaign 1 -o rec2 > /dev/null
diff -r rec rec2 || { echo "FAIL: the recipe after restore differs"; exit 1; }
# refusals
rc=0; "$RATCHET_BIN" --db c.db recipe -o rec > again.out 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q 'rec: not empty' again.out || { cat again.out; echo "FAIL: a non-empty folder ($rc)"; exit 1; }
rc=0; "$RATCHET_BIN" --db c.db recipe --campaign 9 -o rec3 > none.out 2>&1 || rc=$?
[ $rc -eq 2 ] || { cat none.out; echo "FAIL: a missing campaign exited $rc"; exit 1; }
rc=0; "$RATCHET_BIN" --db c.db recipe > noout.out 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q -- '-o DIR is required' noout.out || { cat noout.out; echo "FAIL: no -o ($rc)"; exit 1; }
# a kept patch with a build
command -v git >/dev/null || { echo "git missing"; exit 1; }
. "$RATCHET_SRC/tests/campaign/patch_common.sh"
mkdir "$W/p" && cd "$W/p"
patch_repo
cp -a "$W/p" "$W/p-pristine"
patch_spec recipe-patch src/built.txt <<'Y'
  - name: faster
    patch: {file: faster.diff, dir: src}
    build: [sh, -c, "cp speed.txt built.txt"]
Y
"$RATCHET_BIN" --db c.db run --quiet spec.yaml > run.out 2>&1 || { cat run.out; echo "FAIL: the patch campaign"; exit 1; }
"$RATCHET_BIN" --db c.db recipe -o rec > recipe.out || { cat recipe.out; echo "FAIL: recipe of the patch campaign"; exit 1; }
cat rec/apply.sh
cmp rec/patches/01-faster.diff faster.diff || { echo "FAIL: the kept patch is not in the recipe"; exit 1; }
grep -q 'patches/01-faster.diff: git apply in ' rec/README.txt || { echo "FAIL: README lacks the patch"; exit 1; }
[ "$(cat rec/files/src/speed.txt)" = 130 ] || { echo "FAIL: files/ lacks the patched bytes"; exit 1; }
rm -rf "$W/p-fresh" && cp -a "$W/p-pristine" "$W/p-fresh"
sh rec/apply.sh "$W/p-fresh"
[ "$(cat "$W/p-fresh/src/speed.txt")" = 130 ] && [ "$(cat "$W/p-fresh/src/built.txt")" = 130 ] ||
	{ echo "FAIL: apply.sh did not patch and build the fresh copy"; exit 1; }
# the patch itself carries the change to another checkout
(cd "$W/p-pristine/src" && git apply "$W/p/rec/patches/01-faster.diff") && [ "$(cat "$W/p-pristine/src/speed.txt")" = 130 ] ||
	{ echo "FAIL: the recipe's patch does not apply"; exit 1; }
echo PASS
