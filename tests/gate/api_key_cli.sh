#!/bin/sh
# The API key from the command line to the servers: `ratchet gate`, `ratchet
# run` (its load benchmark and its gate) and, once it has the option,
# `ratchet bench load`, against the tests' servers started with --require-key
# (401 without "Authorization: Bearer KEY"). The key comes from the variable
# --api-key-env names (OPENAI_API_KEY unset), or from OPENAI_API_KEY by
# default; a named variable that is not set is a usage error (exit 2); the key
# reaches no file, no output. $1: gate_fakeserver, $2: load_testserver.
# Cases: run_help, gate_key_env, gate_default_env, gate_no_key, run_key_env,
# run_missing_var, bench_load_key_env, no_leak.
set -u
GATE_SERVER=$1
LOAD_SERVER=$2
DATA=${RATCHET_GSM8K_DIR}/test.jsonl
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
T=$(mktemp -d /tmp/rt-key-cli-XXXXXX)
GP= LP=
cleanup() {
	[ -n "$GP" ] && kill "$GP" 2>/dev/null
	[ -n "$LP" ] && kill "$LP" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$T"/out "$T"/err; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done; exit 1; }
# url_of FILE: the address a server printed ("... listening on HOST:PORT").
url_of() {
	i=0
	while ! grep -q "listening on" "$1" 2>/dev/null; do
		i=$((i + 1)); [ $i -gt 100 ] && fail "server did not start: $1"
		sleep 0.05
	done
	echo "http://$(sed -n 's/.*listening on \([^ ]*\).*/\1/p' "$1" | head -n 1)"
}

KEY="sk-test-KEY-CLI-5150"
unset OPENAI_API_KEY
export RATCHET_GSM8K="$RATCHET_GSM8K_DIR"
"$GATE_SERVER" --gsm8k "$DATA" --gsm8k-accuracy 1.0 --require-key "$KEY" --models served-x > "$T/g.out" 2>&1 &
GP=$!
"$LOAD_SERVER" ok 0 --require-key "$KEY" > "$T/l.out" 2>&1 &
LP=$!
GURL=$(url_of "$T/g.out")
LURL=$(url_of "$T/l.out")
R() { "$RATCHET_BIN" --db "$T/r.db" "$@" > "$T/out" 2> "$T/err"; }

# run_help: `ratchet run` has the option
R run --help || fail "run --help exit $?"
grep -q -- "--api-key-env NAME" "$T/out" || fail "run --help lacks --api-key-env"

# gate_key_env: the named variable's key reaches the server
RT_TEST_KEY="$KEY" R gate --endpoint "$GURL" --model m --limit 10 --api-key-env RT_TEST_KEY
rc=$?
[ $rc -eq 0 ] || fail "gate --api-key-env: exit $rc, want 0"
# gate_default_env: OPENAI_API_KEY by default
OPENAI_API_KEY="$KEY" R gate --endpoint "$GURL" --model m --limit 10
rc=$?
[ $rc -eq 0 ] || fail "gate with OPENAI_API_KEY: exit $rc, want 0"
# gate_models_key: without --model, GET /v1/models is asked with the key
# (vLLM under --api-key protects it), and the listed id is used
OPENAI_API_KEY="$KEY" R gate --endpoint "$GURL" --limit 4
rc=$?
[ $rc -eq 0 ] || fail "gate without --model: exit $rc, want 0"
grep -q "model served-x" "$T/err" || fail "gate did not take the listed model: $(cat "$T/err")"
# gate_no_key: every request refused with 401: an error
R gate --endpoint "$GURL" --model m --limit 10
rc=$?
[ $rc -eq 3 ] || fail "gate without a key: exit $rc, want 3"
sqlite3 "$T/r.db" "SELECT error FROM gate_answers" | grep -q "HTTP 401" || fail "401 not recorded"

# run_key_env: a campaign's load benchmark and gate both get the key
cat > "$T/spec.yaml" <<Y
name: key-e2e
benchmarks:
  - name: l
    load: {endpoint: "$LURL", api: completions, pattern: closed, concurrency: 2, prompt_tokens: 8,
           output_tokens: 2, requests: 4}
objective: {metric: l.output_throughput, goal: max}
repeats: {min: 1, max: 1}
gate: {gsm8k: {endpoint: "$GURL", model: m, min_accuracy: 0.5, limit: 10, format: gsm8k_cot,
               dataset: "$DATA"}}
variants:
  - name: v
    env: {RT_FOO: "1"}
strategy: list
Y
RT_TEST_KEY="$KEY" R run --quiet --max-iterations 1 --api-key-env RT_TEST_KEY "$T/spec.yaml"
rc=$?
[ $rc -eq 0 ] || fail "run --api-key-env: exit $rc, want 0"
ok=$(sqlite3 "$T/r.db" "SELECT count(*) FROM requests WHERE ok = 1 AND iteration_id IS NOT NULL")
[ "$ok" -eq 4 ] || fail "load benchmark: $ok requests succeeded, want 4"
g=$(sqlite3 "$T/r.db" "SELECT count(*) FROM gate_runs WHERE iteration_id IS NOT NULL AND passed = 1")
[ "$g" -eq 1 ] || fail "campaign gate: $g passing runs, want 1"

# run_missing_var: a named variable that is not set is a usage error
R run --api-key-env RT_NO_SUCH_VAR_X "$T/spec.yaml"
rc=$?
[ $rc -eq 2 ] || fail "run with a missing key variable: exit $rc, want 2"
grep -q "RT_NO_SUCH_VAR_X is not set" "$T/err" || fail "missing variable not named"

# bench_load_key_env: `ratchet bench load` takes the key the same way
"$RATCHET_BIN" bench load --help 2>/dev/null | grep -q -- "--api-key-env" ||
	fail "bench load --help lacks --api-key-env"
RT_TEST_KEY="$KEY" R bench load --endpoint "$LURL" -n 4 --api-key-env RT_TEST_KEY
rc=$?
[ $rc -eq 0 ] || fail "bench load --api-key-env: exit $rc, want 0"
OPENAI_API_KEY="$KEY" R bench load --endpoint "$LURL" -n 4
rc=$?
[ $rc -eq 0 ] || fail "bench load with OPENAI_API_KEY: exit $rc, want 0"
R bench load --endpoint "$LURL" -n 4
rc=$?
[ $rc -eq 3 ] || fail "bench load without a key: exit $rc, want 3 (every request refused)"

# no_leak: the key is in no file and no output
for f in "$T"/r.db* "$T"/out "$T"/err; do
	[ -f "$f" ] || continue
	grep -q "KEY-CLI-5150" "$f" && fail "API key found in $f"
done
echo "ok"
