#!/bin/sh
# Secrets given in the spec stay out of everything stored or printed: a
# campaign whose variants set HF_TOKEN and a URL with ?api_key=, and whose
# benchmark prints them. Neither value may be in the database file, nor in
# the output of run, log, show, report (Markdown and HTML) or export (JSON and
# CSV); "[redacted]" stands where they were.
set -eu
: "${RATCHET_BIN:?}"
W=$(mktemp -d /tmp/ratchet-redact-XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
cd "$W"
TOK=hf_variantSECRET1234567
QK=sk-urlSECRET456
cat > spec.yaml <<Y
name: secrets
benchmarks:
  - name: b
    command: [sh, -c, 'echo "token \$HF_TOKEN url \$SERVICE_URL" >&2; echo "{\"x\": 1}"']
    metrics: {x: {pointer: /x, better: higher}}
objective: {metric: b.x, goal: max}
repeats: {min: 2, max: 2}
variants:
  - {name: tok, env: {HF_TOKEN: $TOK}}
  - {name: url, env: {SERVICE_URL: "http://h.example/v1?api_key=$QK"}}
strategy: list
Y
"$RATCHET_BIN" --db c.db run spec.yaml > out.txt 2>&1 || { cat out.txt; echo "FAIL: run"; exit 1; }
"$RATCHET_BIN" --db c.db log >> out.txt 2>&1
for id in 1 2 3; do "$RATCHET_BIN" --db c.db show --full "$id" >> out.txt 2>&1; done
"$RATCHET_BIN" --db c.db report > report.md 2>> out.txt
"$RATCHET_BIN" --db c.db report --format html > report.html 2>> out.txt
"$RATCHET_BIN" --db c.db export --format json -o - > export.json 2>> out.txt
"$RATCHET_BIN" --db c.db export --format csv -o csv >> out.txt 2>&1
grep -q "HF_TOKEN" out.txt || { cat out.txt; echo "FAIL: show does not describe the change"; exit 1; }
grep -q "\[redacted\]" out.txt || { cat out.txt; echo "FAIL: no [redacted] where the token was"; exit 1; }
for secret in "$TOK" "$QK"; do
	if grep -rl -- "$secret" out.txt report.md report.html export.json csv c.db c.db-wal 2>/dev/null; then
		echo "FAIL: $secret is in the files above"
		exit 1
	fi
done
echo PASS
