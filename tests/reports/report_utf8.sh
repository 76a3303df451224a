#!/bin/sh
# The HTML report is well-formed UTF-8 whatever the database holds: a small
# campaign, then ill-formed bytes written into a change description, a
# decision reason and a note (overlong forms, a surrogate, stray and cut
# sequences). The report must decode as strict UTF-8, with U+FFFD where the
# bad bytes were, and keep the good multi-byte text as it was.
set -eu
: "${RATCHET_BIN:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
command -v python3 >/dev/null || { echo "python3 missing (make deps installs it)"; exit 1; }
. "${RATCHET_SRC:?}/tests/lib/common.sh"
scratch_dir ratchet-utf8
cat > spec.yaml <<'Y'
name: utf8
benchmarks:
  - name: b
    command: [sh, -c, 'echo "{\"x\": 1}"']
    metrics: {x: {pointer: /x, better: higher}}
objective: {metric: b.x, goal: max}
repeats: {min: 2, max: 2}
variants:
  - {name: v1, env: {A: "1"}}
strategy: list
Y
"$RATCHET_BIN" --db c.db run --quiet spec.yaml > out.txt 2>&1 || { cat out.txt; echo "FAIL: run"; exit 1; }
sqlite3 c.db "UPDATE iterations SET change_text = CAST(X'636166C3A920C0AF20EDA08020E282' AS TEXT) WHERE seq = 1;
              UPDATE iterations SET reason = CAST(X'726561736F6E2080FF2DF09F98' AS TEXT) WHERE seq = 1;"
"$RATCHET_BIN" --db c.db note 2 "$(printf 'note \303\251 \200\201 end')" >> out.txt 2>&1
"$RATCHET_BIN" --db c.db report --format html > report.html 2>> out.txt || { cat out.txt; echo "FAIL: report"; exit 1; }
python3 - report.html <<'P' || { echo "FAIL: the report is not well-formed UTF-8"; exit 1; }
import sys
t = open(sys.argv[1], 'rb').read().decode('utf-8')  # strict: raises on a bad byte
assert 'caf\u00e9' in t, 'good text lost'
assert '\ufffd' in t, 'no U+FFFD where the bad bytes were'
assert 'reason' in t and 'note \u00e9' in t, 'reason or note missing'
P

# A model's answer or a server's reply with terminal escapes (ESC [ 31 m,
# DEL, BEL, the one-byte CSI U+009B) stored as a change, a reason and a note:
# none of those bytes reaches the HTML (issue 22).
sqlite3 c.db "UPDATE iterations SET change_text = 'red' || char(27) || '[31mX' || char(127) || char(7) || char(155) || '2J' WHERE seq = 1;
              UPDATE iterations SET reason = 'why' || char(27) || ']0;title' || char(7) || char(133) WHERE seq = 1;"
"$RATCHET_BIN" --db c.db note 2 "$(printf 'esc \033[31mred\033[0m')" >> out.txt 2>&1
"$RATCHET_BIN" --db c.db report --format html > ctrl.html 2>> out.txt || { cat out.txt; echo "FAIL: report"; exit 1; }
python3 - ctrl.html <<'P' || { echo "FAIL: control characters reached the HTML report"; exit 1; }
import re, sys
t = open(sys.argv[1], 'rb').read().decode('utf-8')
bad = re.findall(r'[\x00-\x08\x0b-\x1f\x7f-\x9f]', t)
assert not bad, 'control characters in the report: %r' % sorted(set(bad))
assert 'red' in t and '[31mX' in t and 'esc ' in t, 'the text around the escapes was lost'
P
echo PASS
