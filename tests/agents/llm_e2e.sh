#!/bin/sh
# strategy llm end to end: the seed's evening in miniature on simserve
# (tests/research/evening.sh), the changes proposed by a chat model, here a
# scripted fake (fakechat: canned answers in order, each request logged).
#  1. simserve's trace is imported with the spec: the top finding is the
#     missing prefill.T_LE_512 entry;
#  2. the campaign asks the model, five calls at most (llm.max_calls):
#       call 1  a graph capture flag                  accepted, measured
#       call 2  malformed JSON                         invalid, asked again
#       call 3  the flag of call 1 under another name  duplicate: iteration 2 failed
#       call 4  an entry of a file it may not touch    disallowed, asked again
#       call 5  the missing prefill entry              accepted, kept, gate passing
#     then the budget is spent and the search stops, saying so;
#  3. the prompt holds the journal and the top finding, the re-ask names the
#     error, every exchange is stored with its verdict, the key is nowhere in
#     the database, `show` prints the exchanges beside the decision;
#  4. a kill -9 after an answer was accepted: --resume measures the recorded
#     answer without asking again;
#  5. pre-flight names an unset key variable; a dead endpoint stops the run;
#  6. the token budget (llm.max_tokens) stops the search.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_BUILD:?}" "${RATCHET_GSM8K_DIR:?}" "${RATCHET_SRC:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
for p in simserve fakechat; do
	[ -x "$RATCHET_BUILD/$p" ] || { echo "$p not built"; exit 77; }
done
. "${RATCHET_SRC:?}/tests/lib/common.sh"
SIM= FC= RUN=
scratch_dir ratchet-llm SIM FC RUN
R() { "$RATCHET_BIN" --db c.db "$@"; }
q() { sqlite3 c.db "$1"; }

cp "$RATCHET_SRC/experiments/simserve/tiles.json" tiles.json
echo '{"x": {"BLOCK_M": 16}}' > other.json
KEY="sk-llm-e2e-$$-do-not-store"
export LLM_E2E_KEY="$KEY"
. "$RATCHET_SRC/tests/lib/evening.sh"

# spec PORT MAX_CALLS [MAX_TOKENS [RESPONSE_FORMAT]]: the evening's spec with strategy llm
spec() {
	evening_head evening-llm
	cat <<Y
variants:
  - name: graphs-16
    flag: [--max-graph-bs, "16"]
  - name: tune-gt512
    table: {file: tiles.json, set: {"prefill.T_GT_512": {BLOCK_M: 128, BLOCK_N: 128, num_warps: 8}}}
strategy: llm
llm:
  endpoint: http://127.0.0.1:$1/v1
  model: fake-tuner
  api_key_env: LLM_E2E_KEY
  max_calls: $2
  max_tokens: ${3:-0}
  timeout: 10s
  response_format: ${4:-none}
Y
}

# 1. profile simserve and import the trace with the spec: the findings
"$RATCHET_BUILD/simserve" --port 0 --model sim-ev --tiles tiles.json $SIMARGS --profile-dir prof \
	> sim.out 2>&1 &
SIM=$!
port=$(port_of sim.out)
R bench load --endpoint "http://127.0.0.1:$port" --model sim-ev -c 1 -n 16 --prompt-tokens 400 \
	--output-tokens 4 --ignore-eos --no-store > bench.out 2>&1 || { cat bench.out; no "bench load"; }
kill -TERM "$SIM"; wait "$SIM" || true; SIM=
spec 1 5 > spec.yaml
R profile import --spec spec.yaml prof/*.trace.json > import.out 2>&1 || { cat import.out; echo "FAIL: import"; exit 1; }
top=$(q "SELECT detail FROM findings ORDER BY potential DESC LIMIT 1")
echo "top finding: $top"
echo "$top" | grep -q 'prefill.T_LE_512' && ok "the top finding is the missing prefill.T_LE_512 entry" ||
	no "top finding: $top"
fill=$(q "SELECT variant FROM findings WHERE variant LIKE '%T_LE_512%' ORDER BY potential DESC LIMIT 1")
[ -n "$fill" ] && ok "the finding carries a variant: $fill" || { no "no variant for the hole"; exit 1; }

# 2. the script and the campaign
cat > script.txt <<EOF
{"variant": {"name": "graphs-16x", "flag": ["--max-graph-bs", "16"]}, "rationale": "graph capture for small batches"}
----
{"variant": {"name": "broken", "flag": ["--max-graph-bs",
----
\`\`\`json
{"variant": {"name": "graphs-again", "flag": ["--max-graph-bs", "16"]}, "rationale": "graphs again"}
\`\`\`
----
{"variant": {"name": "other-tile", "table": {"file": "other.json", "set": {"x": {"BLOCK_M": 32}}}}, "rationale": "try another table"}
----
{"variant": $fill, "rationale": "the top finding: prefill.T_LE_512 runs on the default tile"}
EOF
"$RATCHET_BUILD/fakechat" --script script.txt --log chat.log --key "$KEY" > fc.out 2>&1 &
FC=$!
cport=$(port_of fc.out)
spec "$cport" 5 0 json_schema > spec.yaml
R check spec.yaml > check.out 2>&1 && ok "the llm spec checks" || { cat check.out; no "check"; }
rc=0
R run --quiet spec.yaml > run.out 2>&1 || rc=$?
cat run.out
[ $rc -eq 0 ] || { echo "FAIL: the run exited $rc"; exit 1; }
q "SELECT seq, variant, kind, state, reason FROM iterations ORDER BY seq"
q "SELECT seq, attempt, verdict, error FROM llm_exchanges ORDER BY id"
[ "$(q "SELECT group_concat(verdict, ',') FROM (SELECT verdict FROM llm_exchanges ORDER BY id)")" = \
	accepted,invalid,duplicate,disallowed,accepted ] && ok "five exchanges, each with its verdict" ||
	no "verdicts: $(q "SELECT group_concat(verdict, ',') FROM llm_exchanges")"
q "SELECT error FROM llm_exchanges WHERE verdict = 'invalid'" | grep -q 'not JSON' &&
	ok "the malformed answer is recorded as not JSON" || no "invalid error"
q "SELECT error FROM llm_exchanges WHERE verdict = 'duplicate'" | grep -q 'already measured' &&
	ok "the duplicate is refused by fingerprint" || no "duplicate error"
q "SELECT error FROM llm_exchanges WHERE verdict = 'disallowed'" | grep -q "file 'other.json' is not allowed" &&
	ok "the file it may not touch is refused" || no "disallowed error"
[ "$(q "SELECT state FROM iterations WHERE seq = 2")" = failed ] &&
	q "SELECT reason FROM iterations WHERE seq = 2" | grep -q 'failed proposal' &&
	ok "two refusals make iteration 2 a failed proposal" || no "iteration 2"
st=$(q "SELECT state FROM iterations WHERE variant = 'fill-prefill-t-le-512'")
[ "$st" = kept ] && ok "the campaign keeps the filled hole" || no "fill state: $st"
g=$(q "SELECT g.passed FROM gate_runs g JOIN iterations i ON i.gate_run_id = g.id WHERE i.variant = 'fill-prefill-t-le-512'")
[ "$g" = 1 ] && ok "with the gate passing" || no "gate: $g"
grep -q '"prefill.T_LE_512"' tiles.json && ok "tiles.json now has the entry" || no "tiles.json"
q "SELECT value FROM env_facts WHERE key = 'search.done'" | grep -q 'llm: the budget of 5 calls is spent' &&
	ok "the spent budget stops the search, saying so" || no "budget stop"
[ "$(grep -c '^auth: key$' chat.log)" = 5 ] && ok "each request carried the key" || no "auth lines"

# 3. what the model saw, what is stored
sed -n 2p chat.log > first.json
grep -q 'Journal (every iteration so far' first.json && grep -q '0. baseline (baseline): baseline' first.json &&
	ok "the prompt holds the journal" || no "journal in the prompt"
grep -q 'prefill.T_LE_512' first.json && ok "the prompt holds the top finding" || no "finding in the prompt"
sed -n 4p chat.log | grep -q '1. graphs-16x (flag): reverted\|1. graphs-16x (flag): kept' &&
	ok "the next prompt's journal has the measured answer" || no "journal grows"
sed -n 6p chat.log | grep -q 'That answer was refused: the answer is not JSON' &&
	ok "the re-ask names the error" || no "re-ask"
grep -q '"temperature"' first.json && grep -q '"model":"fake-tuner"' first.json && ok "model and temperature sent" ||
	no "request body"
# response_format: json_schema carries the very schema the system message states
python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
f = r["response_format"]
assert f["type"] == "json_schema" and f["json_schema"]["name"], f
sysmsg = r["messages"][0]["content"]
stated = json.loads(sysmsg.split("valid against this JSON Schema:\n", 1)[1].split("\n", 1)[0])
assert f["json_schema"]["schema"] == stated, (f, stated)
assert stated["required"] == ["variant", "rationale"], stated' first.json &&
	ok "response_format json_schema carries the answer schema of the prompt" || no "response_format json_schema"
sqlite3 c.db .dump > dump.sql
if grep -q -- "$KEY" c.db dump.sql c.db-wal 2>/dev/null; then no "the key reached the database"; else
	ok "the key is nowhere in the database"; fi
grep -qi 'authorization' dump.sql && no "an Authorization header was stored" || ok "no header stored"
kid=$(q "SELECT id FROM iterations WHERE variant = 'fill-prefill-t-le-512'")
R show "$kid" > show.out
grep -q 'llm exchanges' show.out && grep -q 'disallowed' show.out && grep -q 'accepted' show.out &&
	ok "show prints the round's exchanges beside the decision" || { cat show.out; no "show"; }
# show --json carries the round whole: the messages sent as a JSON array, the
# response body, each verdict; the same rows as the table
R --json show "$kid" > show.json
want=$(q "SELECT group_concat(verdict, ',') FROM (SELECT verdict FROM llm_exchanges WHERE iteration_id = $kid ORDER BY id)")
python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
x = d["llm_exchanges"]
assert ",".join(e["verdict"] for e in x) == sys.argv[2], (x, sys.argv[2])
assert all(isinstance(e["request"], list) and e["request"][-1]["role"] == "user" for e in x), x
assert x[-1]["variant"]["name"] == "fill-prefill-t-le-512" and x[-1]["rationale"], x[-1]
assert all(e["error"] for e in x[:-1]), x
assert "choices" in x[-1]["response"], x[-1]["response"]' show.json "$want" &&
	ok "show --json carries the exchanges ($want)" || no "show --json exchanges"
grep -q -- "$KEY" show.json && no "the key reached show --json" || ok "no key in show --json"
R export --format json --table llm_exchanges -o x.json > /dev/null && ok "export has llm_exchanges" || no "export"

# 4. kill -9 after an accepted answer, then --resume: no second question
kill -TERM "$FC"; wait "$FC" || true; FC=
rm -f c.db c.db-wal c.db-shm chat.log
cp "$RATCHET_SRC/experiments/simserve/tiles.json" tiles.json
R profile import --spec spec.yaml prof/*.trace.json > /dev/null 2>&1
printf '%s\n' "{\"variant\": $fill, \"rationale\": \"fill the hole\"}" > script2.txt
"$RATCHET_BUILD/fakechat" --script script2.txt --log chat.log --key "$KEY" > fc.out 2>&1 &
FC=$!
cport=$(port_of fc.out)
spec "$cport" 1 0 json_object > spec.yaml
"$RATCHET_BIN" --db c.db run --quiet spec.yaml > run3.out 2>&1 &
RUN=$!
for _ in $(seq 600); do
	[ "$(q "SELECT count(*) FROM llm_exchanges WHERE verdict = 'accepted'" 2>/dev/null || echo 0)" = 1 ] && break
	sleep 0.1
done
kill -9 "$RUN"; wait "$RUN" 2>/dev/null || true; RUN=
[ "$(grep -c '^auth:' chat.log)" = 1 ] && ok "one question before the kill" || no "questions: $(grep -c '^auth:' chat.log)"
sed -n 2p chat.log | grep -q '"response_format":{"type":"json_object"}' && ok "response_format json_object sent" ||
	no "response_format json_object: $(sed -n 2p chat.log | grep -o '"response_format":[^]]*' | head -c 200)"
rc=0
R run --quiet --resume spec.yaml > resume.out 2>&1 || rc=$?
cat resume.out
q "SELECT seq, variant, state, reason FROM iterations ORDER BY seq"
q "SELECT seq, attempt, verdict, iteration_id FROM llm_exchanges ORDER BY id"
[ $rc -eq 0 ] && ok "the resumed run finishes" || no "resume exit $rc"
[ "$(grep -c '^auth:' chat.log)" = 1 ] && ok "--resume asked nothing again" || no "asked again"
# measured to a decision (kept, as a rule; a loaded host may make it inconclusive)
st=$(q "SELECT state FROM iterations WHERE variant = 'fill-prefill-t-le-512' ORDER BY seq DESC LIMIT 1")
[ "$st" = kept ] || [ "$st" = reverted ] && ok "the recorded answer is measured ($st)" || no "resumed fill: $st"
[ "$(q "SELECT iteration_id FROM llm_exchanges")" = "$(q "SELECT max(id) FROM iterations")" ] &&
	ok "the round belongs to the iteration that measured it" || no "link after resume"

# 5. the key's variable unset: pre-flight says so; a dead endpoint: the run
# stops with exit 3, the failed request recorded
rc=0
env -u LLM_E2E_KEY "$RATCHET_BIN" --db c.db check --preflight spec.yaml > pf.out 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q 'llm.api_key_env: the environment variable LLM_E2E_KEY' pf.out &&
	ok "pre-flight names the unset key variable" || { cat pf.out; no "preflight exit $rc"; }
kill -TERM "$FC"; wait "$FC" || true; FC=
spec "$cport" 3 > spec.yaml
rc=0
R run --quiet spec.yaml > dead.out 2>&1 || rc=$?
[ $rc -eq 3 ] && grep -q "llm: http://127.0.0.1:$cport/v1" dead.out &&
	[ "$(q "SELECT verdict FROM llm_exchanges ORDER BY id DESC LIMIT 1")" = failed ] &&
	ok "a dead endpoint stops the run (exit 3), the request recorded as failed" || { cat dead.out; no "dead exit $rc"; }

# 6. the token budget: the first answer's usage spends it (a store of its own)
printf '%s\n' '{"variant": {"name": "graphs-8", "flag": ["--max-graph-bs", "8"]}, "rationale": "smaller graphs"}' \
	> script3.txt
"$RATCHET_BUILD/fakechat" --script script3.txt --log chat3.log > fc.out 2>&1 &
FC=$!
cport=$(port_of fc.out)
spec "$cport" 5 100 > spec.yaml
rc=0
"$RATCHET_BIN" --db t.db run --quiet spec.yaml > tok.out 2>&1 || rc=$?
[ $rc -eq 0 ] && [ "$(grep -c '^auth:' chat3.log)" = 1 ] &&
	sqlite3 t.db "SELECT value FROM env_facts WHERE key = 'search.done' ORDER BY id DESC LIMIT 1" |
	grep -q 'llm: the budget of 100 tokens is spent' &&
	ok "the token budget stops the search after one call, saying so" || { cat tok.out; no "token budget $rc"; }
grep -q '"response_format"' chat3.log && no "response_format: none sent one" || ok "response_format: none sends none"
finish
