#!/bin/sh
# `ratchet devices`: lists the host, and for cuda/hip/ze either their devices
# or one line saying "not built" / "no device: ..."; exits 0 either way.
# --json is valid JSON; --peak stores ceilings in device_peaks.
set -eu
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$RATCHET_BIN" --db "$T/r.db" devices >"$T/out" 2>"$T/err" || fail "devices exit $?: $(cat "$T/err")"
grep -q '^host:0 ' "$T/out" || fail "no host line: $(cat "$T/out")"
for b in cuda hip ze; do
	grep -Eq "^$b(:[0-9]+ |: not built|: no device: )" "$T/out" || fail "no $b line: $(cat "$T/out")"
done
# With the toolkit's stub libcuda first on the path, cuInit fails: a clear reason.
if grep -q '^cuda: no device: ' "$T/out" && [ -e /usr/local/cuda/lib64/stubs/libcuda.so ]; then
	LD_LIBRARY_PATH=/usr/local/cuda/lib64/stubs "$RATCHET_BIN" --db "$T/r.db" devices >"$T/out2" ||
		fail "devices with stub libcuda exit $?"
	grep -q '^cuda: no device: ' "$T/out2" || fail "stub: $(cat "$T/out2")"
fi

"$RATCHET_BIN" --db "$T/r.db" devices --json >"$T/json" || fail "devices --json exit $?"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); b={x["backend"] for x in d["backends"]}; assert b=={"host","cuda","hip","ze"}, b; h=[x for x in d["backends"] if x["backend"]=="host"][0]; assert h["devices"][0]["compute_units"]>=1' "$T/json" ||
	fail "bad json: $(cat "$T/json")"

"$RATCHET_BIN" --db "$T/r.db" devices --peak --peak-bytes 4194304 --backend host >"$T/peak" || fail "devices --peak exit $?"
grep -q 'copy .* GB/s' "$T/peak" || fail "no copy peak: $(cat "$T/peak")"
n=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from device_peaks where backend=\"host\"").fetchone()[0])' "$T/r.db")
[ "$n" -ge 2 ] || fail "device_peaks has $n host rows"

"$RATCHET_BIN" --db "$T/r.db" devices --backend cdua >/dev/null 2>"$T/err" && fail "bad backend accepted"
grep -q "did you mean 'cuda'" "$T/err" || fail "no did-you-mean: $(cat "$T/err")"

# The vendor table: every row with its figures and a source URL.
"$RATCHET_BIN" devices --datasheet >"$T/ds" || fail "devices --datasheet exit $?"
grep -q '^datasheet peaks of NVIDIA H200 SXM (dense TFLOP/s): fp8 1979 bf16 989 fp16 989 fp32 67 mxfp4 -$' "$T/ds" ||
	fail "no H200 row: $(cat "$T/ds")"
grep -q 'MI355X.*mxfp4 10000' "$T/ds" || fail "no MI355X row"
[ "$(grep -c '^  source: .*https://' "$T/ds")" -eq "$(grep -c '^datasheet' "$T/ds")" ] || fail "a row without a source"
"$RATCHET_BIN" devices --datasheet --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert all(r["source"] and "fp8" in r for r in d), d' ||
	fail "bad datasheet json"
echo ok
