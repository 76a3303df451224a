#!/bin/sh
# Profiling in the loop (spec profile: command, when: baseline): a campaign on
# simserve whose runner, with no person, profiles the best configuration
# after the baseline (simserve --profile-dir, added by profile.engine_flags,
# writes a Chrome trace at shutdown; profile.sh drives load through it) and
# records it as an observed iteration with its findings before the first
# change. A runner killed with SIGKILL during the profile step recorded
# nothing; --resume profiles again and records one observation.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_BUILD:?}" "${RATCHET_SRC:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
[ -x "$RATCHET_BUILD/simserve" ] || { echo "simserve not built"; exit 1; }
. "${RATCHET_SRC:?}/tests/lib/common.sh"
RUN=
KILL9=1
scratch_dir ratchet-profloop RUN
q() { sqlite3 c.db "$1"; }
. "$RATCHET_SRC/tests/lib/procs.sh"

cp "$RATCHET_SRC/experiments/simserve/tiles.json" tiles.json
cat > profile.sh <<S
#!/bin/sh
# the load profiled: what the campaign measures, through the engine on port \$1
[ -f "$W/hang" ] && { touch "$W/in-profile"; sleep 20; }
exec "$RATCHET_BIN" bench load --endpoint "http://127.0.0.1:\$1" --model sim-p -c 1 -n 8 \
	--prompt-tokens 400 --output-tokens 4 --ignore-eos --no-store > "$W/profile-load.out" 2>&1
S
cat > spec.yaml <<Y
name: profloop
engine:
  command: ["$RATCHET_BUILD/simserve", --port, "{port}", --nonce, "{nonce}", --model, sim-p,
            --tiles, "{workdir}/tiles.json", --decode-us-per-step, "100", --decode-us-per-seq, "500",
            --prefill-us-per-token, "20"]
  ready: {http: /health, timeout: 20s}
  identity: {http: /v1/models, model: sim-p}
  stop_grace: 2s
benchmarks:
  - name: serve
    load: {api: completions, pattern: closed, concurrency: 1, prompt_tokens: 400,
           output_tokens: 4, requests: 8, ignore_eos: true, timeout: 5s}
objective: {metric: serve.output_throughput, goal: max, min_gain: 5%}
repeats: {min: 2, max: 2}
strategy: list
variants:
  - name: tune-gt512
    table: {file: tiles.json, set: {"prefill.T_GT_512": {BLOCK_M: 128, BLOCK_N: 128, num_warps: 8}}}
profile:
  command: [sh, "{workdir}/profile.sh", "{port}"]
  when: baseline
  timeout: 60s
  engine_flags: [--profile-dir, "{workdir}/.ratchet-profile"]
Y
"$RATCHET_BIN" check spec.yaml > check.out 2>&1 && grep -q 'when: baseline' check.out &&
	ok "check reads profile: command and when" || { cat check.out; no "check"; }

# 1. killed during the profile step: nothing recorded, the engine reaped on --resume
touch hang
"$RATCHET_BIN" --db c.db run --quiet spec.yaml > run1.out 2>&1 &
RUN=$!
for _ in $(seq 300); do [ -f in-profile ] && break; sleep 0.1; done
[ -f in-profile ] && ok "the runner started the profile step after the baseline" || { cat run1.out; no "no profile step"; }
kill -9 "$RUN"; wait "$RUN" 2>/dev/null || true; RUN=
[ "$(q "SELECT count(*) FROM iterations WHERE kind = 'observe'")" = 0 ] &&
	ok "killed mid-profile: no observation recorded" || no "a half observation"
rm -f hang
rc=0
"$RATCHET_BIN" --db c.db run --resume --quiet spec.yaml > run2.out 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat run2.out; echo "FAIL: --resume exited $rc"; exit 1; }
q "SELECT seq, kind, variant, state, reason FROM iterations ORDER BY seq"
alive=0
# a group with a live member of this test's own (tests/lib/procs.sh says why not `kill -0 -PGID`)
for pg in $(q "SELECT value FROM env_facts WHERE key = 'engine.pgid'"); do
	group_ours "$pg" "$W" && alive=$((alive + 1))
done
npg=$(q "SELECT count(*) FROM env_facts WHERE key = 'engine.pgid'")
[ "$npg" -ge 3 ] && [ $alive -eq 0 ] && ok "no engine of the $npg launched left running (the killed run's was reaped)" || no "$alive engines still running"

# 2. one observed iteration, before the first change, with its findings
[ "$(q "SELECT count(*) FROM iterations WHERE kind = 'observe'")" = 1 ] && ok "one observation after the resume" ||
	no "observations: $(q "SELECT count(*) FROM iterations WHERE kind = 'observe'")"
st=$(q "SELECT seq || ':' || variant || ':' || state FROM iterations WHERE kind = 'observe'")
[ "$st" = 1:profile:observed ] && ok "seq 1 is the runner's profile, observed ($st)" || no "observe row: $st"
first=$(q "SELECT min(seq) FROM iterations WHERE kind NOT IN ('baseline', 'observe')")
[ "$first" = 2 ] && ok "the first change comes after it (seq $first)" || no "first change at $first"
obs=$(q "SELECT id FROM iterations WHERE kind = 'observe'")
[ "$(q "SELECT count(*) FROM profiles WHERE iteration_id = $obs AND campaign_id = 1 AND format = 'chrome' AND steps > 0")" = 1 ] &&
	ok "its profile is stored with its steps" || no "profile row"
nf=$(q "SELECT count(*) FROM findings WHERE iteration_id = $obs")
[ "$nf" -gt 0 ] && ok "with $nf findings" || no "no findings"
q "SELECT kind || ': ' || detail FROM findings WHERE iteration_id = $obs ORDER BY potential DESC" | head -3
[ "$(q "SELECT count(*) FROM findings WHERE iteration_id = $obs AND kind = 'hole' AND subject = 'tiles.json: prefill.T_LE_512'")" = 1 ] &&
	ok "the hole of the prompts' shape class is among them" || no "hole finding"
"$RATCHET_BIN" --db c.db propose --campaign 1 --top 1 > propose.out 2>&1 && grep -q 'fill-prefill-t-le-512' propose.out &&
	ok "propose sees it" || { cat propose.out; no "propose"; }
[ "$(ls .ratchet-profile | wc -l)" = 1 ] && ok "the profile folder holds the one trace imported" || no "profile dir: $(ls .ratchet-profile)"
finish
