#!/bin/sh
# findings and propose on a simserve campaign whose space searches one entry
# of tiles.json (issue 23, item 6):
#  a. the space's table is checked for holes, but the entry the space
#     searches is not one: its default tile is reported as a fallback that
#     the space's search sets, never as an untuned hole; a missing entry the
#     space does not search (decode.BS_LE_32) is a hole with a variant;
#  b. findings prints each finding's id beside its rank, and propose takes
#     that id (propose ID proposes that finding; an unknown id exits 2);
#  c. once a campaign has tried the proposed variant and reverted it,
#     propose says so above it ("already tried in iteration 2:1: reverted"),
#     and --json in the entry's already_tried (null for a campaign that
#     never tried it).
set -u
: "${RATCHET_BIN:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
[ -x "$RATCHET_BUILD/simserve" ] || { echo "simserve not built"; exit 1; }
. "${RATCHET_SRC:?}/tests/lib/common.sh"
scratch_dir ratchet-propose
R() { "$RATCHET_BIN" --db c.db "$@"; }
q() { sqlite3 c.db "$1"; }

echo '{"decode.BS_LE_8": {"BLOCK_M": 16, "BLOCK_N": 64, "num_warps": 4},
 "prefill.T_LE_512": {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4},
 "prefill.T_GT_512": {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8}}' > tiles.json
head() {
	cat <<Y
name: $1
seed: 1
engine:
  command: ["$RATCHET_BUILD/simserve", --port, "{port}", --nonce, "{nonce}", --tiles, "{workdir}/tiles.json",
            --decode-us-per-step, "100", --decode-us-per-seq, "200", --max-graph-bs, "64",
            --profile-dir, "{workdir}/prof"]
  ready: {http: /health, timeout: 30s}
  identity: {http: /v1/models}
  stop_grace: 2s
benchmarks:
  - name: decode
    load: {api: completions, pattern: closed, concurrency: 48, prompt_tokens: 64,
           output_tokens: 16, requests: 96, ignore_eos: true}
repeats: {min: 2, max: 2}
Y
}
{ head space; cat <<'Y'
objective: {metric: decode.output_throughput, goal: max, min_gain: 2%}
strategy: coordinate
max_iterations: 1
space:
  parameters:
    - {name: BLOCK_M, values: [8, 16], table: {file: tiles.json, key: decode.BS_GT_32}}
    - {name: BLOCK_N, values: [16, 64], table: {file: tiles.json, key: decode.BS_GT_32}}
    - {name: num_warps, values: [1, 4], table: {file: tiles.json, key: decode.BS_GT_32}}
Y
} > space.yaml
R run --quiet space.yaml > run1.out 2>&1 || { cat run1.out; echo "FAIL: the space campaign"; exit 1; }
trace=$(grep -l 'BS_GT_32,tile=default' prof/*.trace.json | sed -n 1p)
[ -n "$trace" ] || { echo "FAIL: no trace with the default BS_GT_32 tile"; exit 1; }
R observe --campaign 1 "$trace" > observe.out 2>&1 || { cat observe.out; echo "FAIL: observe"; exit 1; }

# a. the searched entry is not a hole; the table's other missing entry is
[ "$(q "SELECT count(*) FROM findings WHERE kind = 'hole' AND subject LIKE '%decode.BS_GT_32%'")" = 0 ] &&
	ok "the entry the space searches is not a hole" || no "decode.BS_GT_32 reported as a hole"
q "SELECT detail FROM findings WHERE kind = 'fallback'" | grep -q 'default kernel on decode.BS_GT_32, an entry the space searches' &&
	ok "its default tile is a fallback the space's search sets" || { q "SELECT kind, detail FROM findings"; no "fallback"; }
q "SELECT evidence FROM findings WHERE kind = 'fallback' AND detail LIKE '%space searches%'" |
	grep -q 'no tuned config matched' && no "the searched entry's evidence says untuned"
hole=$(q "SELECT id FROM findings WHERE kind = 'hole' AND subject = 'tiles.json: decode.BS_LE_32' AND variant IS NOT NULL")
[ -n "$hole" ] && ok "decode.BS_LE_32, which the space does not search, is a hole with a variant (finding $hole)" ||
	{ q "SELECT id, kind, subject FROM findings"; no "no hole for decode.BS_LE_32"; }

# b. findings prints the id propose takes
R findings --campaign 1 > findings.out
cat findings.out
top=$(q "SELECT id FROM findings WHERE campaign_id = 1 ORDER BY potential DESC, id LIMIT 1")
sed -n 1p findings.out | grep -Eq '^  rank id +bound' && sed -n 2p findings.out | grep -Eq "^  1 +$top +[0-9.]+%" &&
	ok "findings prints the rank and the id ($top)" || no "findings' columns: $(sed -n 1,2p findings.out)"
R propose "$hole" > p1.out 2> p1.err || { cat p1.err; no "propose $hole"; }
grep -q "^# finding $hole (rank [0-9]*, hole" p1.out && grep -q 'name: fill-decode-bs-le-32' p1.out &&
	[ "$(grep -c '^- name:' p1.out)" = 1 ] && ok "propose $hole proposes that finding" || { cat p1.out; no "propose ID"; }
rc=0; R propose 99999 > /dev/null 2> p2.err || rc=$?
[ $rc -eq 2 ] && grep -q 'no finding 99999 (the id column of `ratchet findings`)' p2.err &&
	ok "an unknown id exits 2" || { cat p2.err; no "propose 99999 exited $rc"; }

# c. a campaign that tried the variant and reverted it: propose says so
{ head list; echo "objective: {metric: decode.output_throughput, goal: max, min_gain: 50%}";
  echo "strategy: list"; echo "variants:"; grep -v '^#' p1.out; } > list.yaml
R run --quiet list.yaml > run2.out 2>&1 || { cat run2.out; echo "FAIL: the list campaign"; exit 1; }
st=$(q "SELECT state FROM iterations WHERE campaign_id = 2 AND seq = 1")
[ "$st" = reverted ] || { cat run2.out; no "the variant was not reverted ($st): the test's premise"; }
R observe --campaign 2 "$trace" > observe2.out 2>&1 || { cat observe2.out; no "observe 2"; }
R propose --campaign 2 > p3.out 2> p3.err || { cat p3.err; no "propose --campaign 2"; }
cat p3.out
delta=$(q "SELECT printf('%+.1f%%', obj_delta * 100) FROM iterations WHERE campaign_id = 2 AND seq = 1")
grep -B1 -- '^- name: fill-decode-bs-le-32' p3.out | grep -qF "# already tried in iteration 2:1: reverted, $delta" &&
	ok "propose says it was tried in 2:1 and reverted ($delta)" || no "propose does not say it was tried"
R propose --campaign 1 "$hole" | grep -q 'already tried' && no "campaign 1 never tried it"
# the same in --json: each entry's already_tried, the iteration or null
R --json propose --campaign 2 > p3.json 2> p3j.err || { cat p3j.err; no "--json propose --campaign 2"; }
want=$(q "SELECT printf('2 1 reverted %.6f', obj_delta) FROM iterations WHERE campaign_id = 2 AND seq = 1")
tried_json() { # FILE VARIANT: "campaign seq state delta" of its already_tried, or "null"
	python3 -c 'import json, sys
for e in json.load(open(sys.argv[1])):
    if e["variant"]["name"] == sys.argv[2]:
        t = e["already_tried"]
        print("null" if t is None else "%d %d %s %.6f" % (t["campaign"], t["seq"], t["state"], t["delta"]))' "$1" "$2"
}
got=$(tried_json p3.json fill-decode-bs-le-32)
[ "$got" = "$want" ] && ok "--json: already_tried is {campaign 2, seq 1, reverted, delta} ($got)" ||
	{ cat p3.json; no "--json already_tried '$got', expected '$want'"; }
R --json propose --campaign 1 "$hole" > p4.json
got=$(tried_json p4.json fill-decode-bs-le-32)
[ "$got" = null ] && python3 -c 'import json, sys; e = json.load(open(sys.argv[1]))[0]
assert e["finding"] == int(sys.argv[2]) and e["kind"] == "hole" and e["rank"] >= 1 and 0 < e["bound"] < 1' p4.json "$hole" &&
	ok "--json: a variant never tried has already_tried null, beside its finding, rank, kind and bound" ||
	{ cat p4.json; no "--json for campaign 1 ($got)"; }
finish
