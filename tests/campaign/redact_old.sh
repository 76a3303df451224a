#!/bin/sh
# A store written before redaction existed holds secrets in the clear: rows
# written raw (a change, a reason, a note, a chat exchange, a stored
# benchmark output, the spec's text). What log, show (text, --full,
# --json), report (Markdown, HTML) and export print of it passes through the
# one redaction function: none of the secrets is printed (issue 22).
set -eu
: "${RATCHET_BIN:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
W=$(mktemp -d /tmp/ratchet-redact-old-XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
cd "$W"
B=sk-oldBEARER1234567
T=hf_oldTOKEN7654321
P=pwOLDsecret99
K=ak-oldAPIKEY24680
cat > spec.yaml <<'Y'
name: old-store
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
# What an older version wrote, unredacted.
sqlite3 c.db "
UPDATE iterations SET change_text = 'env HF_TOKEN=$T' WHERE seq = 1;
UPDATE iterations SET reason = 'server said: Authorization: Bearer $B' WHERE seq = 1;
UPDATE campaigns SET spec_text = spec_text || '# endpoint: http://user:$P@host/v1?api_key=$K';
INSERT INTO llm_exchanges (campaign_id, seq, attempt, iteration_id, request, response, verdict, error,
                           rationale, latency_ms, created_at)
  SELECT campaign_id, 1, 1, id, '{\"messages\": \"HF_TOKEN: $T\"}', '{\"answer\": \"Bearer $B\"}', 'invalid',
         'url http://user:$P@host/', 'api_key=$K', 12, 0 FROM iterations WHERE seq = 1;
UPDATE artifacts SET content = CAST('Bearer $B api_key=$K' AS BLOB), size = 40 WHERE kind = 'bench-output';
" || { echo "FAIL: could not write the old rows (schema changed?)"; exit 1; }
"$RATCHET_BIN" --db c.db note 2 "url http://user:$P@host/v1" > /dev/null 2>&1 || true
sqlite3 c.db "UPDATE notes SET text = 'HF_TOKEN=$T and http://user:$P@host/' WHERE 1" 2>/dev/null || true
: > all.txt
for cmd in "log" "show 1" "show 2" "show --full 2" "--json show 2" "--json show --full 2" "report" "report --format html" \
	"export --format json -o -" "regressions"; do
	# shellcheck disable=SC2086
	"$RATCHET_BIN" --db c.db $cmd > one.txt 2>&1 || true
	for s in "$B" "$T" "$P" "$K"; do
		if grep -q -- "$s" one.txt; then
			grep -n -- "$s" one.txt | head -3
			echo "FAIL: ratchet $cmd prints $s from an old store"
			exit 1
		fi
	done
	cat one.txt >> all.txt
done
grep -q "\[redacted\]" all.txt || { echo "FAIL: no [redacted] where the secrets were"; exit 1; }
grep -q "server said" all.txt || { echo "FAIL: the reason is not shown at all"; exit 1; }
echo PASS
