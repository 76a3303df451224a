#!/bin/sh
# strategy llm on a device pool (issue 25): four simulated devices
# (host:0..3), simserve, and a scripted chat server (fakechat).
#   1. a round asks for four distinct answers: a repeat of an answer taken
#      for the round is refused as a duplicate and asked again; the four
#      trials run on four devices, each with its accepted exchange and its
#      proposals row (target -1, the answer's id);
#   2. the round's best passing trial is confirmed by a round of one that
#      measures the same stored answer (no new question), and only a
#      confirmation keeps anything;
#   3. the spent budget stops the search, saying so;
#   4. kill -9 of the runner while the first round is measured, then
#      --resume: the recorded answers are measured, no question is asked
#      again, the campaign finishes and no process is left.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}" "${RATCHET_BUILD:?}"
. "$RATCHET_SRC/tests/lib/decode_bench.sh"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
for p in simserve fakechat; do
	[ -x "$RATCHET_BUILD/$p" ] || { echo "$p not built"; exit 77; }
done
. "${RATCHET_SRC:?}/tests/lib/common.sh"
FC= RUN=
KILL9=1
scratch_dir ratchet-pool-llm FC RUN
q() { sqlite3 -cmd ".timeout 5000" c.db "$1"; }
answer() { # NAME STEP RATIONALE
	printf '{"variant": {"name": "%s", "flag": ["--decode-us-per-step", "%s"]}, "rationale": "%s"}\n' "$1" "$2" "$3"
}

spec() { # CHAT_PORT MAX_CALLS
	cat <<Y
name: pool-llm
seed: 5
engine:
  command: ["$RATCHET_BUILD/simserve", --port, "{port}", --model, "sim-{nonce}",
            --decode-us-per-step, "2000", --decode-us-per-seq, "10"]
  identity: {model: "sim-{nonce}"}
  ready: {http: /health, timeout: 20s}
  stop_grace: 1s
$(decode_bench)
devices: [host:0, host:1, host:2, host:3]
variants:
  - name: step-1500
    flag: [--decode-us-per-step, "1500"]
strategy: llm
llm:
  endpoint: http://127.0.0.1:$1/v1
  model: fake-tuner
  max_calls: $2
  timeout: 10s
Y
}

# 1-3. an uninterrupted campaign
{
	answer step-1500 1500 "a shorter step"; echo ----
	answer step-1500-again 1500 "the same step again"; echo ----
	answer step-1000 1000 "shorter still"; echo ----
	answer step-200 200 "the shortest"; echo ----
	answer step-1800 1800 "a little shorter"; echo ----
	answer step-200-b 200 "the shortest, once more"; echo ----
	answer step-600 600 "between"
} > script.txt
"$RATCHET_BUILD/fakechat" --script script.txt --log chat.log > fc.out 2>&1 &
FC=$!
cport=$(port_of fc.out)
spec "$cport" 7 > spec.yaml
"$RATCHET_BIN" check spec.yaml > check.out 2>&1 || { cat check.out; echo "FAIL: check"; exit 1; }
rc=0
"$RATCHET_BIN" --db c.db run spec.yaml > run.out 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat run.out; echo "FAIL: ratchet run exited $rc"; exit 1; }
q "SELECT i.seq, i.round, i.device, i.role, i.state, i.variant, p.point, i.reason FROM iterations i
   LEFT JOIN proposals p ON p.iteration_id = i.id ORDER BY i.seq"
q "SELECT id, seq, attempt, iteration_id, verdict, error FROM llm_exchanges ORDER BY id"
[ "$(q "SELECT count(DISTINCT device) FROM iterations WHERE round = 1 AND role = 'trial'")" = 4 ] &&
	ok "round 1: four trials on four devices" || no "round 1 devices"
[ "$(q "SELECT group_concat(variant, ',') FROM (SELECT variant FROM iterations WHERE round = 1 AND role = 'trial'
       ORDER BY seq)")" = step-1500,step-1000,step-200,step-1800 ] &&
	ok "round 1 holds four distinct answers, in the order asked" || no "round 1 variants"
q "SELECT error FROM llm_exchanges WHERE verdict = 'duplicate' ORDER BY id LIMIT 1" | grep -q 'already being measured in this round' &&
	ok "a repeat of an answer taken for the round is refused as a duplicate" || no "duplicate in the round"
n=$(q "SELECT count(*) FROM iterations i WHERE i.role IN ('trial', 'confirm') AND NOT EXISTS
       (SELECT 1 FROM proposals p WHERE p.iteration_id = i.id AND p.target = -1 AND p.point LIKE '{\"answer\":%')")
[ "$n" = 0 ] && ok "every measured answer has its proposals row (target -1, the answer's id)" ||
	no "$n iterations without their answer's proposals row"
n=$(q "SELECT count(*) FROM iterations i WHERE i.role = 'trial' AND NOT EXISTS (SELECT 1 FROM llm_exchanges x
       WHERE x.iteration_id = i.id AND x.verdict = 'accepted')")
[ "$n" = 0 ] && ok "every trial is linked to its accepted exchange" || no "$n trials without their exchange"
bad=$(q "SELECT count(*) FROM iterations c JOIN proposals pc ON pc.iteration_id = c.id WHERE c.role = 'confirm'
         AND pc.point NOT IN (SELECT p.point FROM iterations t JOIN proposals p ON p.iteration_id = t.id
         WHERE t.role = 'trial' AND t.round = c.round AND t.passed = 1)")
nc=$(q "SELECT count(*) FROM iterations WHERE role = 'confirm'")
[ "$nc" -ge 1 ] && [ "$bad" = 0 ] && ok "$nc confirmation(s), each of its round's passing trial's stored answer" ||
	no "confirmations: $nc, $bad of no passing trial"
[ "$(q "SELECT variant FROM iterations WHERE role = 'confirm' ORDER BY seq LIMIT 1")" = step-200 ] &&
	ok "round 1's confirmation is its best trial (step 200)" || no "round 1's confirmation"
[ "$(q "SELECT count(*) FROM iterations WHERE state = 'kept' AND role != 'confirm'")" = 0 ] &&
	[ "$(q "SELECT count(*) FROM iterations WHERE state = 'kept'")" -ge 1 ] &&
	ok "only confirmations keep, and one did" || no "kept rows"
[ "$(grep -c '^auth:' chat.log)" = 7 ] && [ "$(q "SELECT count(*) FROM llm_exchanges")" = 7 ] &&
	ok "seven questions, seven exchanges: confirmations asked nothing" || no "questions: $(grep -c '^auth:' chat.log)"
grep -q 'taken for this round' chat.log && ok "a later question of a round names the answers already taken" ||
	no "the round's taken answers are not in the prompt"
q "SELECT value FROM env_facts WHERE key = 'search.done'" | grep -q 'budget of 7 calls is spent' &&
	ok "the spent budget stops the search, saying so" || no "search.done"
kill "$FC" 2>/dev/null || true; wait "$FC" 2>/dev/null || true; FC=

# 4. kill -9 while round 1 is measured, then --resume: no new question
rm -f c.db c.db-wal c.db-shm chat.log
{
	answer step-1500 1500 "a shorter step"; echo ----
	answer step-1000 1000 "shorter still"; echo ----
	answer step-200 200 "the shortest"; echo ----
	answer step-1800 1800 "a little shorter"
} > script2.txt
"$RATCHET_BUILD/fakechat" --script script2.txt --log chat.log > fc.out 2>&1 &
FC=$!
cport=$(port_of fc.out)
spec "$cport" 4 > spec.yaml
"$RATCHET_BIN" --db c.db run --quiet spec.yaml > run2.out 2>&1 &
RUN=$!
for _ in $(seq 600); do
	n=$(q "SELECT count(*) FROM measurements m JOIN iterations i ON i.id = m.iteration_id WHERE i.round = 1" \
		2>/dev/null || echo 0)
	[ "${n:-0}" -ge 2 ] && break
	sleep 0.1
done
kill -9 "$RUN" 2>/dev/null || { cat run2.out; echo "FAIL: the run ended before round 1 was measured ($n measurements)"; exit 1; }
wait "$RUN" 2>/dev/null || true; RUN=
asked=$(grep -c '^auth:' chat.log)
[ "$asked" = 4 ] && ok "four questions before the kill" || no "questions before the kill: $asked"
rc=0
"$RATCHET_BIN" --db c.db run --quiet --resume spec.yaml > resume.out 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat run2.out resume.out; no "resume exited $rc"; }
q "SELECT seq, round, role, state, variant FROM iterations ORDER BY seq"
[ "$(grep -c '^auth:' chat.log)" = "$asked" ] && ok "--resume measured the recorded answers without asking" ||
	no "questions after resume: $(grep -c '^auth:' chat.log)"
[ "$(q "SELECT state FROM campaigns")" = finished ] && ok "the resumed campaign finished" || no "campaign state"
[ "$(q "SELECT count(*) FROM iterations WHERE state = 'interrupted'")" -ge 1 ] &&
	ok "the kill left interrupted iterations, measured again" || no "no interrupted iteration"
n=$(q "SELECT count(DISTINCT variant) FROM iterations WHERE role = 'trial' AND state != 'interrupted'")
[ "$n" = 4 ] && ok "each of the four answers measured to an end once" || no "answers measured: $n"
n=$(q "SELECT count(*) FROM iterations WHERE state IN ('pending','applying','applied','measuring')")
[ "$n" = 0 ] || no "$n iterations left unfinished"
sleep 0.5
# an engine or a ratchet (runner, worker) still running in the workdir
left=$(for p in /proc/[0-9]*; do
	[ "$(readlink "$p/cwd" 2>/dev/null)" = "$W" ] || continue
	case "$(cat "$p/comm" 2>/dev/null)" in simserve | ratchet) echo "${p#/proc/}" ;; esac
done)
[ -z "$left" ] && ok "no engine or worker left" || { ps -o pid,args -p $left; no "processes left running"; }
[ $fails -eq 0 ] || { echo "FAIL: $fails"; exit 1; }
echo PASS
