#!/bin/sh
# strategy llm's containment model end to end (docs/reliability.md, "What a
# model's answer may do"): the real ratchet against a scripted chat server
# (fakechat), on a command benchmark, each case its own workdir. A hostile
# model's answers are refused and nothing they ask for happens:
#   build       an answer with build: runs nothing (issue 22 item 1)
#   flag        {"flag": ["-c", ...]} against [sh, -c, ...] runs nothing (item 2)
#   paths       ../, absolute and climbing paths are refused; outside.json
#               stays as it was (item 3)
#   failed      an accepted answer that fails to apply is one failed
#               iteration: the budget (max_calls) ends the run (item 4)
#   secrets     a 401 echoing the key, an answer quoting it, an endpoint with
#               user:PASSWORD@ and ?api_key=: nothing stored or printed holds
#               them (run, show, show --full, --json show) (item 5); the URL's
#               query comes after the chat path (item 23)
#   prompt      a variant's HF_TOKEN never reaches the chat server (item 6)
#   source      file sources /proc/self/environ and a FIFO are refused, the
#               run does not hang (item 7)
#   gitread     a patch git reads as touching src/k.c (its -p guess below
#               a work tree's top) where the text's check reads src/src/k.c:
#               the plan's check fails the iteration and no benchmark runs
#               with it applied
#   cap         a reply over the 4 MiB cap says so, not libcurl's words (item 23)
#   progress    failed proposals print as failed proposals, and the summary
#               counts every iteration (item 23)
. "${RATCHET_SRC:?}/tests/lib/fakechat.sh"
chat_scratch ratchet-llm-contain
q() { sqlite3 "$W/c.db" "$1"; }

# start NAME: a fresh workdir $W with the script $W/script.txt (from stdin)
# served by a fakechat on $PORT.
start() {
	W="$T/$1"
	chat_start "$W"
}
# spec EXTRA_LLM [BENCH_SCRIPT]: a command benchmark, one table variant, the
# llm: section's extra lines (indented by two) from $1; variants from stdin.
spec() {
	{
		cat <<Y
name: contain
benchmarks:
  - name: b
    command: [sh, -c, "${2:-echo 1}"]
    metrics: {x: {regex: "([0-9]+)", better: higher}}
objective: {metric: b.x, goal: max}
repeats: {min: 2, max: 2}
variants:
Y
		cat
		cat <<Y
strategy: llm
llm:
  endpoint: ${ENDPOINT:-http://127.0.0.1:$PORT}
  model: m
  max_calls: ${CALLS:-6}
$1
Y
	} > "$W/spec.yaml"
}
# run: the campaign, never more than 60 s; its status in $rc, output in run.out
run() {
	rc=0
	(cd "$W" && timeout 60 "$RATCHET_BIN" --db c.db run spec.yaml > run.out 2>&1) || rc=$?
}
verdicts() { q "SELECT group_concat(verdict, ',') FROM (SELECT verdict FROM llm_exchanges ORDER BY id)"; }

# ---- build: no command ----
start build <<'A'
{"variant": {"name": "t2", "table": {"file": "tiles.json", "set": {"k": {"v": 2}}}, "build": ["sh", "-c", "touch PWNED"]}, "rationale": "r"}
----
{"variant": {"name": "t3", "table": {"file": "tiles.json", "set": {"k": {"v": 3}}}, "build": ["touch", "PWNED"]}, "rationale": "r"}
A
echo '{"k": {"v": 1}}' > "$W/tiles.json"
CALLS=2 spec "" <<'V'
  - name: t1
    table: {file: tiles.json, set: {k: {v: 1}}}
V
run
[ ! -e "$W/PWNED" ] && ok "build: an answer's build ran nothing" || no "build: PWNED exists"
[ "$(verdicts)" = disallowed,disallowed ] && q "SELECT error FROM llm_exchanges" | grep -q "never runs a command" &&
	ok "build: both answers disallowed, saying why" || no "build: verdicts $(verdicts)"

# ---- flag: never the option that carries the script ----
start flag <<'A'
{"variant": {"name": "f", "flag": ["-c", "touch PWNED; echo 5"]}, "rationale": "r"}
----
{"variant": {"name": "g", "flag": ["-z", "1"]}, "rationale": "r"}
----
{"variant": {"name": "t9", "flag": ["-t", "9"]}, "rationale": "r"}
A
CALLS=3 spec "" <<'V'
  - name: t1
    flag: [-t, "1"]
V
run
[ ! -e "$W/PWNED" ] && ok "flag: -c of sh -c ran nothing" || no "flag: PWNED exists"
[ "$(verdicts)" = disallowed,disallowed,accepted ] && ok "flag: -c and an unlisted -z disallowed, -t accepted" ||
	no "flag: verdicts $(verdicts)"
q "SELECT error FROM llm_exchanges" | grep -q "flag '-c' carries a program" &&
	q "SELECT error FROM llm_exchanges" | grep -q "flag '-z' is not allowed (allowed: -t)" &&
	ok "flag: the errors name the rule" || no "flag: errors $(q "SELECT error FROM llm_exchanges")"
grep -q "llm-refused failed: failed proposal" "$W/run.out" && ! grep -q "baseline failed" "$W/run.out" &&
	grep -q "3 iterations this run" "$W/run.out" &&
	ok "progress: a failed proposal prints as one, and the summary counts it" || no "progress: $(cat "$W/run.out")"
start flagcheck < /dev/null
spec "  flags: [-t, -c]" <<'V'
  - name: t1
    flag: [-t, "1"]
V
(cd "$W" && "$RATCHET_BIN" check spec.yaml > check.out 2>&1) && no "flag: check accepted llm.flags: [-c]" ||
	{ grep -q "llm.flags\[1\].*'-c' carries a program" "$W/check.out" && ok "flag: check refuses llm.flags: [-c]" ||
		no "flag: check said $(cat "$W/check.out")"; }
spec "  env: [A, LD_PRELOAD]" <<'V'
  - name: t1
    flag: [-t, "1"]
V
(cd "$W" && "$RATCHET_BIN" check spec.yaml > check.out 2>&1) && no "env: check accepted llm.env: [LD_PRELOAD]" ||
	{ grep -q "llm.env\[1\].*'LD_PRELOAD' changes how programs are loaded" "$W/check.out" &&
		ok "env: check refuses llm.env: [LD_PRELOAD]" || no "env: check said $(cat "$W/check.out")"; }

# ---- paths: real paths inside the workdir, globs per component ----
start paths/w <<A
{"variant": {"name": "p1", "table": {"file": "$T/paths/w/kernels/../../outside.json", "set": {"k": {"v": 2}}}}, "rationale": "r"}
----
{"variant": {"name": "p2", "table": {"file": "../outside.json", "set": {"k": {"v": 2}}}}, "rationale": "r"}
----
{"variant": {"name": "p3", "table": {"file": "$T/x/outside.json", "set": {"k": {"v": 2}}}}, "rationale": "r"}
----
{"variant": {"name": "p4", "table": {"file": "kernels/sub/deep.json", "set": {"k": {"v": 2}}}}, "rationale": "r"}
----
{"variant": {"name": "p5", "table": {"file": "out/outside.json", "set": {"k": {"v": 2}}}}, "rationale": "r"}
A
mkdir -p "$W/kernels/sub" "$T/x"
echo '{"k": {"v": 1}}' > "$W/tiles.json"
echo '{"k": {"v": 1}}' > "$W/kernels/a.json"
echo '{"k": {"v": 1}}' > "$W/kernels/sub/deep.json"
echo '{"k": {"v": 1}}' > "$T/paths/outside.json"
echo '{"k": {"v": 1}}' > "$T/x/outside.json"
ln -s "$T/x" "$W/out"
CALLS=5 spec '  files: [tiles.json, "kernels/*.json", "*.json", "out/*.json"]' <<'V'
  - name: t1
    table: {file: tiles.json, set: {k: {v: 1}}}
V
run
[ "$(verdicts)" = disallowed,disallowed,disallowed,disallowed,disallowed ] &&
	ok "paths: ../, absolute, climbing, two components under '*' and a link out all disallowed" ||
	no "paths: verdicts $(verdicts)"
grep -q '"v": 1' "$T/paths/outside.json" && grep -q '"v": 1' "$T/x/outside.json" &&
	grep -q '"v": 1' "$W/kernels/sub/deep.json" && ok "paths: no file outside was touched" || no "paths: a file changed"
[ "$(q "SELECT count(*) FROM iterations WHERE seq > 0 AND variant != 'llm-refused'")" = 0 ] &&
	ok "paths: no answer was applied" || no "paths: $(q "SELECT group_concat(variant) FROM iterations WHERE seq > 0")"

# ---- failed: a failed apply is a failed iteration, and the budget ends ----
start failed <<'A'
{"variant": {"name": "m1", "table": {"file": "kernels/missing.json", "set": {"k": {"v": 2}}}}, "rationale": "r"}
----
{"variant": {"name": "m2", "table": {"file": "kernels/missing.json", "set": {"k": {"v": 3}}}}, "rationale": "r"}
----
{"variant": {"name": "m3", "table": {"file": "kernels/missing.json", "set": {"k": {"v": 4}}}}, "rationale": "r"}
A
mkdir -p "$W/kernels"
echo '{"k": {"v": 1}}' > "$W/tiles.json"
CALLS=3 spec '  files: [tiles.json, "kernels/*.json"]' <<'V'
  - name: t1
    table: {file: tiles.json, set: {k: {v: 1}}}
V
run
[ $rc -ne 124 ] && ok "failed: the run ends (status $rc)" || no "failed: still running after 60 s"
[ "$(q "SELECT count(*) FROM iterations WHERE seq > 0 AND state = 'failed'")" = 3 ] &&
	[ "$(q "SELECT count(*) FROM llm_exchanges")" = 3 ] &&
	ok "failed: three answers, three failed iterations, then max_calls ends the search" ||
	no "failed: $(q "SELECT count(*) FROM iterations") iterations, $(q "SELECT count(*) FROM llm_exchanges") calls"

# ---- secrets: a 401 echoing the key, an endpoint with credentials ----
KEY="sk-contain-$$-do-not-store"
PW="pw-contain-$$-secret"
QK="qk-contain-$$-query"
export LLM_AUTH="$KEY"
start secrets401 <<A
@status 401
{"error": {"message": "invalid key: Bearer $KEY (you sent $KEY)"}}
A
echo '{"k": {"v": 1}}' > "$W/tiles.json"
ENDPOINT="http://user:$PW@127.0.0.1:$PORT/v1?api_key=$QK" spec "  api_key_env: LLM_AUTH" <<'V'
  - name: t1
    table: {file: tiles.json, set: {k: {v: 1}}}
V
run
grep -q "HTTP 401" "$W/run.out" && ok "secrets: the 401 reached the runner at /v1/chat/completions?api_key=" ||
	no "secrets: $(cat "$W/run.out")"
leaks() { grep -c -e "$KEY" -e "$PW" -e "$QK" "$@" 2>/dev/null | awk -F: '{s += $NF} END {print s + 0}'; }
[ "$(leaks "$W/run.out")" = 0 ] && [ "$(sqlite3 "$W/c.db" .dump | leaks)" = 0 ] &&
	ok "secrets: neither stderr nor the store holds the key, the URL's password or its api_key" ||
	no "secrets: leaked: $(grep -e "$KEY" -e "$PW" -e "$QK" "$W/run.out"; sqlite3 "$W/c.db" .dump | grep -e "$KEY" -e "$PW" -e "$QK" | cut -c1-300)"

# ---- secrets in an answer, the spec's HF_TOKEN in the prompt, ESC ----
HF="hf_contain_$$_secret_value"
start secretsok <<A
{"variant": {"name": "a2", "env": {"A": "2"}}, "rationale": "with the key $KEY, in \u001b[31mred"}
A
CALLS=1 spec "  api_key_env: LLM_AUTH" <<V
  - name: a1
    env: {A: "1"}
  - name: tok
    env: {HF_TOKEN: $HF}
V
run
R() { (cd "$W" && "$RATCHET_BIN" --db c.db "$@"); }
[ "$(verdicts)" = accepted ] && [ "$(q "SELECT state FROM iterations WHERE seq = 1")" = reverted ] &&
	ok "secretsok: the answer was measured" || no "secretsok: $(verdicts); $(cat "$W/run.out")"
R show 1:1 > "$W/show.out" 2>&1; R show --full 1:1 >> "$W/show.out" 2>&1; R --json show 1:1 >> "$W/show.out" 2>&1
R report --format md -o report.md > /dev/null 2>&1
[ "$(leaks "$W/run.out" "$W/show.out" "$W/report.md")" = 0 ] && [ "$(sqlite3 "$W/c.db" .dump | leaks)" = 0 ] &&
	grep -q "redacted" "$W/show.out" &&
	ok "secretsok: an answer quoting the key: show, show --full, --json show, the report and the store hold [redacted]" ||
	no "secretsok: leaked: $(grep -e "$KEY" "$W/run.out" "$W/show.out" "$W/report.md" | cut -c1-200)"
! grep -q "$HF" "$W/chat.log" && [ "$(sqlite3 "$W/c.db" .dump | grep -c "$HF")" = 0 ] &&
	ok "prompt: the spec's HF_TOKEN never reached the chat server nor llm_exchanges" || no "prompt: HF_TOKEN sent"
[ -s "$W/report.md" ] && ! grep -q "$(printf '\033')" "$W/report.md" && grep -q "red" "$W/report.md" &&
	ok "report: the model's ESC byte is not in the Markdown report" || no "report: an ESC byte in report.md"

# ---- file sources: regular files inside the workdir only ----
start source <<'A'
{"variant": {"name": "s1", "file": {"target": "tiles.json", "source": "/proc/self/environ"}}, "rationale": "r"}
----
{"variant": {"name": "s2", "file": {"target": "tiles.json", "source": "pipe.json"}}, "rationale": "r"}
----
{"variant": {"name": "s3", "file": {"target": "tiles.json", "source": "/dev/zero"}}, "rationale": "r"}
A
echo '{"k": {"v": 1}}' > "$W/tiles.json"
echo '{"k": {"v": 2}}' > "$W/alt.json"
mkfifo "$W/pipe.json"
CALLS=3 spec '  files: ["*.json"]' <<'V'
  - name: f1
    file: {target: tiles.json, source: alt.json}
V
run
[ $rc -ne 124 ] && [ "$(verdicts)" = disallowed,disallowed,disallowed ] &&
	ok "source: /proc/self/environ, a FIFO and /dev/zero refused, no hang" || no "source: status $rc, $(verdicts)"
q "SELECT error FROM llm_exchanges" | grep -q "source '/proc/self/environ' is outside the workdir" &&
	q "SELECT error FROM llm_exchanges" | grep -q "not a regular file" && ok "source: the errors name the rule" ||
	no "source: $(q "SELECT error FROM llm_exchanges")"

# ---- gitread: what git apply itself reads is checked too ----
# patch.dir src is below the top of a git work tree: git apply run there
# guesses -p from the folder (git 2.39.5, apply.c guess_p_value with a
# prefix), so "a/src/k.c" is src/k.c to git (-p2), while the text's check,
# reading -p1, sees src/src/k.c, which llm.files allows. The plan's check
# (git apply --numstat) refuses it before anything is applied.
start gitread <<'A'
{"variant": {"name": "g1", "patch": {"file": "p.diff", "dir": "src"}}, "rationale": "r"}
A
echo '{"k": {"v": 1}}' > "$W/tiles.json"
mkdir -p "$W/src/src"
echo a > "$W/src/k.c"
echo a > "$W/src/src/k.c"
printf -- '--- a/src/k.c\n+++ b/src/k.c\n@@ -1 +1 @@\n-a\n+b\n' > "$W/p.diff"
git -C "$W" init -q
CALLS=1 spec '  kinds: [table, patch]
  files: [tiles.json, p.diff, "src/src/*"]' 'cat src/k.c >> seen.txt; echo 1' <<'V'
  - name: t1
    table: {file: tiles.json, set: {k: {v: 1}}}
V
run
grep -q a "$W/seen.txt" && ! grep -q b "$W/seen.txt" && [ "$(cat "$W/src/k.c")" = a ] &&
	ok "gitread: no benchmark ran with src/k.c patched, and it is as it was" ||
	no "gitread: the benchmark saw src/k.c as $(sort -u "$W/seen.txt" | tr '\n' ' ')"
[ "$(verdicts)" = accepted ] && [ "$(q "SELECT state FROM iterations WHERE seq = 1")" = failed ] &&
	q "SELECT reason FROM iterations WHERE seq = 1" | grep -q "file git apply touches 'src/k.c' is not allowed" &&
	ok "gitread: the text's check passed it, the plan's failed the iteration, naming the file git would patch" ||
	no "gitread: $(q "SELECT state, reason FROM iterations WHERE seq = 1"); $(verdicts)"

# ---- the reply cap says so ----
start cap <<'A'
@status 200
@repeat 300000 {"x": "123456789"}
A
echo '{"k": {"v": 1}}' > "$W/tiles.json"
spec "" <<'V'
  - name: t1
    table: {file: tiles.json, set: {k: {v: 1}}}
V
run
grep -q "larger than 4 MiB" "$W/run.out" && ! grep -q "Failed writing" "$W/run.out" &&
	ok "cap: a 5 MB reply is refused, saying so" || no "cap: $(tail -n 2 "$W/run.out")"

finish
