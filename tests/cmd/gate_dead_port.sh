#!/bin/sh
# `ratchet gate` against a port nothing listens on says why it failed (the
# first request's error, curl's "Couldn't connect to server", and how many
# failed), not `accuracy 0.0000 (0/0)`, and exits 3; the JUnit file and the
# Markdown summary name the same cause.
set -u
R=${RATCHET_BIN:?}
. "$(dirname "$0")/lib.sh"
scratch gatedead
"$R" --db g.db gate --endpoint http://127.0.0.1:1 --limit 5 --retries 0 \
	--dataset "${RATCHET_GSM8K_DIR:?}" --junit j.xml --summary s.md >out.txt 2>err.txt
rc=$?
cat out.txt err.txt
[ $rc -eq 3 ] && ok "exit 3" || no "exit $rc, want 3"
grep -q "^gate run 1: ERROR: every request failed (5 of 5): Couldn't connect to server (http://127.0.0.1:1)$" out.txt &&
	ok "the cause is named" || no "the cause is not named"
grep -q "0/0" out.txt && no "figures of nothing printed" || ok "no figures of nothing"
# CI reads the JUnit file and the summary, not stdout: both name the cause (issue 23)
cat j.xml s.md
grep -q "Couldn.*t connect to server" j.xml && ok "the JUnit file names the cause" || no "the JUnit file does not say why"
grep -q "Couldn't connect to server" s.md && ok "the summary names the cause" || no "the summary does not say why"
grep -qi "nan" s.md && no "the summary prints nan" || ok "the summary prints no nan"
finish
