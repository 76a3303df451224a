#!/bin/sh
# A database written by version 1 (tests/db/fixtures/schema_v1.sql, the
# schema ratchet 0.1 created) opens, migrates to the current version, and
# keeps everything: greedy's roles, which version 1 kept only in words, land
# in iterations.role and iterations.passed.
set -u
R="$RATCHET_BIN"
tmp=$(mktemp -d /tmp/rt-db-migrate-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
unset RATCHET_DB
export NO_COLOR=1
fails=0
sqlite3 ratchet.db <"$RATCHET_SRC/tests/db/fixtures/schema_v1.sql" || exit 1
sqlite3 ratchet.db <<'SQL' || exit 1
PRAGMA user_version = 1;
INSERT INTO campaigns (id, name, spec_path, spec_text, spec_sha256, workdir, seed, state, created_at)
  VALUES (1, 'g', '/s.yaml', 'name: g', 'x', '/w', 1, 'finished', 1000);
INSERT INTO iterations (id, campaign_id, seq, variant, kind, state, decision, reason, strategy_note, started_at)
  VALUES (1, 1, 0, 'baseline', 'baseline', 'baseline', 'keep', 'baseline', 'baseline', 1000),
         (2, 1, 1, 'a', 'env', 'reverted', 'revert',
          'tok_s +9%; greedy trial passed: the round''s best is applied again at its end',
          'greedy round 1: trial on the current best', 1001),
         (3, 1, 2, 'b', 'env', 'reverted', 'revert', 'no gain', 'greedy round 1: trial on the current best', 1002),
         (4, 1, 3, 'a', 'env', 'kept', 'keep', 'tok_s +8%', 'greedy round 1: confirm the round''s best trial (+9.0%)', 1003),
         (5, 1, 4, 'c', 'env', 'failed', 'revert', 'build failed', 'list: next in spec order (3 of 3)', 1004);
SQL
"$R" log --json >log.json 2>err.txt || { echo "not ok - log on a version-1 database: $(cat err.txt)"; exit 1; }
echo "ok - log opens a version-1 database"
got=$(sqlite3 ratchet.db "PRAGMA user_version")
[ "$got" -ge 2 ] && echo "ok - migrated to version $got" || { echo "not ok - user_version $got"; fails=$((fails + 1)); }
want='1|change|
2|trial|1
3|trial|0
4|confirm|1
5|change|'
got=$(sqlite3 ratchet.db "SELECT id, role, passed FROM iterations ORDER BY id")
if [ "$got" = "$want" ]; then echo "ok - roles and verdicts filled from version 1's words"
else echo "not ok - roles: got"; echo "$got"; fails=$((fails + 1)); fi
n=$(grep -c '"state"' log.json)
[ "$n" -ge 5 ] && echo "ok - every iteration is listed" || { echo "not ok - log lists $n"; fails=$((fails + 1)); }
"$R" show 4 >show.txt 2>&1 && grep -q 'kept' show.txt && echo "ok - show reads a migrated row" ||
	{ echo "not ok - show: $(cat show.txt)"; fails=$((fails + 1)); }
echo "$fails failed"
[ "$fails" -eq 0 ]
