#!/bin/sh
# Every file of a pool's working copies holds what its last journal intent
# says, without any kill (issue 22, item 25): a refill rewrote a copy's
# files from the workdir unjournaled, so a copy whose table a trial had
# reverted, refilled after a change to that table was kept, then used for a
# trial of another file, held bytes no intent named. Two devices, greedy:
# round 1 tries the table change in copy 0 and a file change in copy 1, the
# table change is kept, and round 3 puts a file trial in copy 0.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
W=$(mktemp -d /tmp/ratchet-pool-journal-XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
cd "$W"
. "$RATCHET_SRC/tests/campaign/common.sh"
kill9_setup k
cd k
echo a > other.txt && echo b > other-b.txt && echo c > other-c.txt
cat > variants.yaml <<'Y'
  - {name: fill-1024, table: {file: table.json, set: {M_LE_1024: {tile: 128}}}}
  - {name: other-b, file: {target: other.txt, source: other-b.txt}}
  - {name: other-c, file: {target: other.txt, source: other-c.txt}}
Y
sed -i -e '/^  - {name: /d' -e 's|^strategy: list|strategy: greedy|' spec.yaml
sed -i '/^variants:/r variants.yaml' spec.yaml
run_ok --devices host:0,host:1 spec.yaml
q "SELECT seq, round, device, variant, state FROM iterations ORDER BY seq"
[ "$(q "SELECT state FROM iterations WHERE variant = 'fill-1024' AND state = 'kept'")" = kept ] ||
	{ echo "FAIL: test setup: the table change was not kept"; exit 1; }
[ "$(q "SELECT count(*) FROM iterations WHERE device = 'host:0' AND variant LIKE 'other-%' AND round > 2")" -ge 1 ] ||
	{ echo "FAIL: test setup: no file trial in copy 0 after the keep"; exit 1; }
sqlite3 -separator ' ' c.db "SELECT i.path, CASE i.state WHEN 'done' THEN
	CASE i.after_exists WHEN 1 THEN i.after_sha256 ELSE 'absent' END ELSE
	CASE i.before_exists WHEN 1 THEN i.before_sha256 ELSE 'absent' END END
	FROM intents i WHERE i.id = (SELECT max(j.id) FROM intents j WHERE j.path = i.path)" > last.txt
nc=$(grep -c "c.db.pool/" last.txt || true)
[ "$nc" -ge 2 ] || { echo "FAIL: $nc working-copy files journaled"; exit 1; }
bad=0
while read -r path want; do
	got=absent
	[ -e "$path" ] && got=$(sha256sum < "$path" | cut -d' ' -f1)
	[ "$got" = "$want" ] || { echo "$path is $got, its journal says $want"; bad=$((bad + 1)); }
done < last.txt
[ $bad -eq 0 ] || { echo "FAIL: $bad files differ from their last intent"; exit 1; }
echo "$(wc -l < last.txt) touched paths ($nc in working copies) match the journal"
echo PASS
