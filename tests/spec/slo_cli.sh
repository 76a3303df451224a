#!/bin/sh
# The SLO grammar through `ratchet bench load --slo`: the same names as the
# spec (spec_slo_parse), refused with the list of valid ones, and every --slo
# read (there used to be a silent cap of 64). Nothing here reaches the
# endpoint: each case is a usage error (exit 2) found before any request.
set -u
: "${RATCHET_BIN:?}"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() { # name, expected stderr substring, args...
	name=$1 want=$2
	shift 2
	"$RATCHET_BIN" --db "$tmp/r.db" bench load --endpoint http://127.0.0.1:9 "$@" >/dev/null 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 2 ] || ! grep -qF -- "$want" "$tmp/err"; then
		echo "FAIL $name: exit $rc, want 2 and '$want':"; cat "$tmp/err"; fail=$((fail + 1))
	else
		pass=$((pass + 1))
	fi
}
check p80 "unknown SLO metric 'ttft_p80' (did you mean 'ttft_p90'?): SLO metrics are ttft, tpot, itl, e2el or ttft_sched" \
	--slo ttft_p80=1s
check send_lag "unknown SLO metric 'send_lag'" --slo send_lag=1s
check zero "--slo ttft_p95: '0s' is not a duration" --slo ttft_p95=0s
# the 65th --slo is read too
set --
i=0
while [ $i -lt 64 ]; do set -- "$@" --slo ttft_p95=1s; i=$((i + 1)); done
check slo_65 "unknown SLO metric 'bogus'" "$@" --slo bogus=1s
# durations: `bench load` reads them as the spec does, ns included (its own
# parser used to refuse ns: exit 2, "is not a duration")
"$RATCHET_BIN" --db "$tmp/r.db" bench load --endpoint http://127.0.0.1:9 -n 1 \
	--timeout 2000000000ns --slo ttft_p95=4000000000ns >/dev/null 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 2 ] || grep -q "not a duration" "$tmp/err"; then
	echo "FAIL ns: exit $rc:"; cat "$tmp/err"; fail=$((fail + 1))
else
	pass=$((pass + 1))
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
