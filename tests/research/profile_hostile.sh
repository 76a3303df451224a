#!/bin/sh
# `ratchet profile import` on hostile profiles (issue 22, item 16). Each is
# refused (exit 2) naming the file, and stores nothing:
#   - a negative kernel duration (it gave shares of 200% and -100%);
#   - durations that sum past a double (inf: a NOT NULL error), and nan;
#   - a unitrace Calls of 1e300 or nan (a float-to-long overflow), -3, 2.5;
#   - an Nsight Systems export whose kernel table is a recursive view that
#     never ends: the query is stopped at its time limit (here 2 s, through
#     the testing hook RATCHET_PROFILE_TIME_LIMIT_MS) instead of hanging
#     (a runtime error, exit 3).
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
. "${RATCHET_SRC:?}/tests/lib/common.sh"
scratch_dir ratchet-profile-hostile
F="$RATCHET_SRC/tests/agents/fixtures"
fails=0
R() { "$RATCHET_BIN" --db p.db "$@"; }
# refused NAME FILE PATTERN [ARGS]: exit $EXPECT (2 unless set), the pattern in the error
refused() {
	name=$1 file=$2 pat=$3
	shift 3
	rc=0
	timeout 60 "$RATCHET_BIN" --db p.db profile import "$file" "$@" > e.out 2>&1 || rc=$?
	if [ $rc -eq "${EXPECT:-2}" ] && grep -q -- "$pat" e.out; then
		echo "ok - $name: $(head -n 1 e.out)"
	else
		cat e.out
		echo "not ok - $name: exit $rc"
		fails=$((fails + 1))
	fi
}
kernel() { printf '{"ph": "X", "cat": "kernel", "name": "%s", "dur": %s}' "$1" "$2"; }
printf '{"traceEvents": [%s, %s]}' "$(kernel flash_attn_fwd 10)" "$(kernel gemm_kernel -5)" > neg.json
refused "negative duration" neg.json "neg.json: event at byte [0-9]*: kernel 'gemm_kernel': a duration of -5 us"
printf '{"traceEvents": [%s, %s]}' "$(kernel flash_attn_fwd 1e308)" "$(kernel gemm_kernel 1e308)" > inf.json
refused "durations summing to infinity" inf.json "kernel 'gemm_kernel': a duration of 1e+308 us makes the total overflow"
u="$F/unitrace_xpu_device_timing.txt"
for calls in 1e300 nan -3 2.5; do
	sed "s/^\( *\"rms_norm_kernel<c10::BFloat16>\",\) *40,/\1 $calls,/" "$u" > "calls-$calls.txt"
	grep -q " $calls," "calls-$calls.txt" || { echo "not ok - setup: Calls $calls not written"; exit 1; }
	refused "unitrace Calls $calls" "calls-$calls.txt" "calls-$calls.txt:[0-9]*: kernel 'rms_norm_kernel<c10::BFloat16>': .* calls (a count is a whole number"
done
sed "s/^\( *\"rms_norm_kernel<c10::BFloat16>\",\) *\([0-9]*\), *50000,/\1 \2, nan,/" "$u" > time-nan.txt
refused "unitrace Time nan" time-nan.txt "time-nan.txt:[0-9]*: kernel 'rms_norm_kernel<c10::BFloat16>': a duration of nan us"
# An export whose kernel table is a view over a recursive CTE with no end.
sqlite3 loop.sqlite "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'gemm');
CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n)
  SELECT x AS start, x AS \"end\", 1 AS demangledName FROM n WHERE x < 0;"
t0=$(date +%s)
EXPECT=3 RATCHET_PROFILE_TIME_LIMIT_MS=2000 refused "a recursive view" loop.sqlite "loop.sqlite: its query ran past 2 s"
t=$(($(date +%s) - t0))
[ $t -le 20 ] && echo "ok - stopped in ${t}s" || { echo "not ok - the recursive view took ${t}s"; fails=$((fails + 1)); }
n=$(sqlite3 p.db "SELECT count(*) FROM profiles" 2>/dev/null || echo 0)
[ "$n" = 0 ] && echo "ok - nothing stored" || { echo "not ok - $n profiles stored"; fails=$((fails + 1)); }
[ $fails -eq 0 ] && echo PASS || { echo "FAIL: $fails"; exit 1; }
