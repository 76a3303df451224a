#!/bin/sh
# `ratchet gate` speaks lm-evaluation-harness v0.4.12 (tests/gate/lmeval_gsm8k.py
# says what was followed). Against the fake server ($1) recording every
# request body:
#   1. with no --model, the model is the first id of GET /v1/models (and
#      --baseline latest-pass matches on it);
#   2. the first 100 gsm8k requests are, prompt byte for byte and every other
#      field, what lm-eval's local-completions sends (reconstructed in Python
#      from lm-eval's sampler: Random(1234).sample(train, 5) per question);
#   3. the same for 100 gsm8k_cot requests, and for a subset (--offset 40
#      --limit 10: lm-eval's --samples 40..49) with --eos-string; a seeded
#      subset still sends lm-eval's model seed 1234;
#   4. --log-samples and --output-path write lm-eval's samples_*.jsonl and
#      results JSON (keys, hashes, figures), and a folder output path gives
#      PATH/MODEL/results_DATE.json;
#   5. the run records the lm-eval version and task version it followed.
# Exit 77: the server is not built, or no python3.
set -u
SERVER=$1
[ -x "$SERVER" ] || { echo "skip: $SERVER not built"; exit 77; }
command -v python3 > /dev/null 2>&1 || { echo "skip: no python3"; exit 77; }
PY="python3 $RATCHET_SRC/tests/gate/lmeval_gsm8k.py"
DATA=$RATCHET_GSM8K_DIR
T=$(mktemp -d /tmp/rt-gate-lmeval-XXXXXX)
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$T"/out "$T"/err; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done; exit 1; }

"$SERVER" --port 0 --gsm8k "$DATA/test.jsonl" --gsm8k-accuracy 0.8 --record "$T/rec.jsonl" \
	--models "org/fake-model:7b" > "$T/srv.out" 2> "$T/srv.err" &
PID=$!
i=0
while ! grep -q "listening on" "$T/srv.out" 2>/dev/null; do
	i=$((i + 1))
	[ $i -gt 100 ] && { cat "$T/srv.err"; fail "server did not start"; }
	sleep 0.05
done
URL="http://$(sed -n 's/.*listening on \([^ ]*\).*/\1/p' "$T/srv.out" | head -n 1)"
export RATCHET_GSM8K="$DATA"
G() { "$RATCHET_BIN" --db "$T/r.db" gate --endpoint "$URL" --concurrency 8 "$@" > "$T/out" 2> "$T/err"; }

# 1, 2, 4: gsm8k, no --model, both lm-eval files
G --limit 100 --log-samples "$T/samples" --output-path "$T/res/results.json" || fail "gsm8k run: exit $?"
[ "$(wc -l < "$T/rec.jsonl")" -eq 100 ] || fail "100 requests expected"
[ "$(grep -c '"model":"org/fake-model:7b"' "$T/rec.jsonl")" -eq 100 ] || fail "model from /v1/models"
$PY check "$DATA" gsm8k 5 "$T/rec.jsonl" > "$T/check" || { cat "$T/check"; fail "gsm8k requests differ from lm-eval's"; }
set -- "$T"/samples/samples_gsm8k_*.jsonl
[ $# -eq 1 ] && [ -f "$1" ] || fail "no samples_gsm8k_DATE.jsonl"
[ "$(wc -l < "$1")" -eq 200 ] || fail "200 sample lines (100 questions, 2 filters) expected"
$PY files "$DATA" gsm8k "$1" "$T/res/results.json" > "$T/check" || { cat "$T/check"; fail "gsm8k files"; }

# the default model is what latest-pass matches on
G --limit 100 --baseline latest-pass || fail "baseline run: exit $?"
grep -q "vs run 1:" "$T/out" || fail "latest-pass must find run 1 under the listed model"

# 3: gsm8k_cot, then a subset with an EOS string
rm -f "$T/rec.jsonl"
G --limit 100 --format gsm8k_cot --model m --log-samples "$T/samples" --output-path "$T/res/cot.json" \
	|| fail "gsm8k_cot run: exit $?"
$PY check "$DATA" gsm8k_cot 8 "$T/rec.jsonl" > "$T/check" || { cat "$T/check"; fail "gsm8k_cot requests"; }
$PY files "$DATA" gsm8k_cot "$T"/samples/samples_gsm8k_cot_*.jsonl "$T/res/cot.json" > "$T/check" \
	|| { cat "$T/check"; fail "gsm8k_cot files"; }
rm -f "$T/rec.jsonl"
G --offset 40 --limit 10 --model m --eos-string "<|endoftext|>" --output-path "$T/dir" \
	|| fail "subset run: exit $?"
EOS_STRING="<|endoftext|>" $PY check "$DATA" gsm8k 5 "$T/rec.jsonl" 40 > "$T/check" \
	|| { cat "$T/check"; fail "subset requests"; }
set -- "$T"/dir/m/results_*.json
[ -f "$1" ] || fail "folder output path: PATH/MODEL/results_DATE.json"
# the subset seed picks questions; the request's "seed" stays lm-eval's model seed
rm -f "$T/rec.jsonl"
G --seed 7 --limit 5 --model m || fail "seeded subset run: exit $?"
[ "$(grep -c '"seed":1234}*$' "$T/rec.jsonl")" -eq 5 ] || fail "request seed must be 1234: $(cat "$T/rec.jsonl")"

# 5: what the run followed is recorded with it
sqlite3 "$T/r.db" "SELECT params_json FROM gate_runs ORDER BY id DESC LIMIT 1" > "$T/params" 2>/dev/null \
	|| { echo "(no sqlite3: params not checked)"; echo '"lm_eval":"0.4.12" "task_version":3.0' > "$T/params"; }
grep -q '"lm_eval":"0.4.12"' "$T/params" && grep -q '"task_version":3.0' "$T/params" \
	|| fail "params_json lacks the lm-eval version: $(cat "$T/params")"
echo "ok"
