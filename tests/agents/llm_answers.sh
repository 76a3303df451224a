#!/bin/sh
# strategy llm's answers read as spec entries, on a command benchmark (no
# engine, a second): an answer that is JSON but not a valid variant is
# refused with the spec parser's own message (did-you-mean included), a
# kind the spec does not use is disallowed, a repeat of a measured change
# is a duplicate, and two refusals in a round make a failed iteration
# before the next round asks afresh; a dead end of the script (HTTP 503)
# stops the run with exit 3.
. "${RATCHET_SRC:?}/tests/lib/fakechat.sh"
chat_scratch ratchet-llm-answers
W=$T
cd "$W"
q() { sqlite3 c.db "$1"; }
chat_start "$W" <<'A'
{"variant": {"name": "a2", "env": {"A": "2"}}, "rationale": "A=2"}
----
{"variant": {"name": "t", "tabel": {"file": "x.json"}}, "rationale": "typo"}
----
{"variant": {"name": "f", "flag": ["--x"]}, "rationale": "a flag"}
----
{"variant": {"name": "a2-again", "env": {"A": "2"}}, "rationale": "again"}
----
{"variant": {"name": "a3", "env": {"A": "3"}}, "rationale": "A=3"}
A
port=$PORT
cat > spec.yaml <<Y
name: answers
benchmarks:
  - name: b
    command: [sh, -c, "echo 1"]
    metrics: {x: {regex: "([0-9]+)", better: higher}}
objective: {metric: b.x, goal: max}
repeats: {min: 2, max: 2}
variants:
  - name: a1
    env: {A: "1"}
strategy: llm
llm:
  endpoint: http://127.0.0.1:$port
  model: m
  max_calls: 10
Y
rc=0
"$RATCHET_BIN" --db c.db run --quiet spec.yaml > run.out 2>&1 || rc=$?
cat run.out
q "SELECT seq, attempt, verdict, error FROM llm_exchanges ORDER BY id"
[ "$(q "SELECT group_concat(verdict, ',') FROM (SELECT verdict FROM llm_exchanges ORDER BY id)")" = \
	accepted,invalid,disallowed,duplicate,accepted,failed ] && ok "the verdicts in order" ||
	no "verdicts: $(q "SELECT group_concat(verdict, ',') FROM llm_exchanges")"
q "SELECT error FROM llm_exchanges WHERE verdict = 'invalid'" | grep -q "unknown key 'tabel'.*did you mean 'table'" &&
	ok "an invalid variant gets the spec parser's message" || no "invalid: $(q "SELECT error FROM llm_exchanges WHERE verdict = 'invalid'")"
q "SELECT error FROM llm_exchanges WHERE verdict = 'disallowed'" | grep -q "kind 'flag' is not allowed (allowed: env)" &&
	ok "a kind the spec does not use is disallowed by default" || no "disallowed"
[ "$(q "SELECT kind || ':' || state FROM iterations WHERE seq = 2")" = llm:failed ] &&
	ok "two refusals: iteration 2 failed" || no "iteration 2"
[ "$(q "SELECT count(*) FROM llm_exchanges WHERE seq = 2 AND iteration_id = (SELECT id FROM iterations WHERE seq = 2)")" = 2 ] &&
	ok "the round's two exchanges belong to iteration 2" || no "link"
[ "$(q "SELECT variant FROM iterations WHERE seq = 3")" = a3 ] && ok "the next round asks afresh and measures" || no "seq 3"
[ $rc -eq 3 ] && grep -q 'HTTP 503' run.out && ok "no answer at all stops the run (exit 3)" || no "exit $rc"
grep -q "That answer was refused: (generated variant):1:13: variant: unknown key 'tabel'" chat.log &&
	ok "the re-ask carries the parser's error" || no "re-ask"
finish
