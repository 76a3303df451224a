#!/bin/sh
# `ratchet gate` against a port nothing listens on says why it failed (the
# first request's error, curl's "Couldn't connect to server", and how many
# failed), not `accuracy 0.0000 (0/0)`, and exits 3.
set -u
R=${RATCHET_BIN:?}
tmp=$(mktemp -d /tmp/rt-gatedead-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
"$R" --db g.db gate --endpoint http://127.0.0.1:1 --limit 5 --retries 0 \
	--dataset "${RATCHET_GSM8K_DIR:?}" >out.txt 2>err.txt
rc=$?
cat out.txt err.txt
fails=0
[ $rc -eq 3 ] || { echo "not ok - exit $rc, want 3"; fails=$((fails + 1)); }
grep -q "^gate run 1: ERROR: every request failed (5 of 5): Couldn't connect to server (http://127.0.0.1:1)$" out.txt ||
	{ echo "not ok - the cause is not named"; fails=$((fails + 1)); }
grep -q "0/0" out.txt && { echo "not ok - figures of nothing printed"; fails=$((fails + 1)); }
echo "$fails failed"
[ "$fails" -eq 0 ]
