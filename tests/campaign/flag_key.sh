#!/bin/sh
# One key inside a JSON-valued flag (docs/variants.md): a variant sets
# "sizes" inside --config while "level": 3 stays (fakebench halves its
# speed without it), so the change is kept; one that sets "level" to 2 is
# reverted; the change reads "--config .sizes: [1,2,4] -> [1,2,4,8]"; and
# the best's command line holds both keys after the campaign.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
W=$(mktemp -d /tmp/ratchet-flagkey-XXXXXX)
trap 'rm -rf "$W"' EXIT
cp "$RATCHET_SRC/tests/campaign/table.json" "$W/"
cat > "$W/spec.yaml" <<Y
name: flagkey
benchmarks:
  - name: fake
    command: ["$RATCHET_BUILD/fakebench", "{workdir}/table.json", "0", --config, '{"level":3,"sizes":[1,2,4]}']
    metrics: {gflops: {pointer: /gflops, better: higher}}
objective: {metric: fake.gflops, goal: max, min_gain: 2%}
repeats: {min: 3, max: 8, confidence: 0.95}
variants:
  - name: sizes-8
    flag: {name: --config, key: sizes, value: [1, 2, 4, 8]}
  - name: level-2
    flag: {name: --config, key: /level, value: 2}
strategy: list
Y
cd "$W"
. "$RATCHET_SRC/tests/campaign/common.sh"
"$RATCHET_BIN" check spec.yaml > check.out 2>&1 || { cat check.out; echo "FAIL: check refused the key form"; exit 1; }
run_ok spec.yaml
q "SELECT seq, variant, state, change_text FROM iterations ORDER BY seq"
[ "$(decisions c.db)" = "baseline:baseline sizes-8:kept level-2:reverted" ] ||
	{ echo "FAIL: decisions $(decisions c.db)"; exit 1; }
d=$(q "SELECT change_text FROM iterations WHERE variant='sizes-8'")
[ "$d" = "--config .sizes: [1,2,4] -> [1,2,4,8]" ] || { echo "FAIL: sizes-8 reads '$d'"; exit 1; }
# on top of the kept change: level is read from the best's command line
d=$(q "SELECT change_text FROM iterations WHERE variant='level-2'")
[ "$d" = "--config /level: 3 -> 2" ] || { echo "FAIL: level-2 reads '$d'"; exit 1; }
"$RATCHET_BIN" --db c.db show 1:1 | grep -q -- '--config .sizes: \[1,2,4\] -> \[1,2,4,8\]' ||
	{ echo "FAIL: show lacks the change"; exit 1; }
# a key form the spec cannot hold is refused by check, naming it
sed -e 's|key: sizes,|key: "a..b",|' spec.yaml > bad.yaml
"$RATCHET_BIN" check bad.yaml > bad.out 2>&1 && { echo "FAIL: check took an empty key part"; exit 1; }
grep -q 'an empty part' bad.out || { cat bad.out; echo "FAIL: no reason for the bad key"; exit 1; }
echo PASS
