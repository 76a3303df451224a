#!/bin/sh
# Percent of peak at the clock actually held: a host kernel campaign whose
# device readings come from the telemetry stand-in (SM clock 990 MHz held of
# a 1980 MHz maximum), after `devices --peak` stored the host's ceilings.
# Every sample's pct_peak_flops_held is pct_peak_flops scaled by 1980 / 990,
# the sampler read the kernel benchmark's own device, and `show` names what
# each percentage is of. Also: an unreadable device said once, telemetry off.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
command -v cc >/dev/null || { echo "no C compiler for the host kernel"; exit 77; }
W=$(mktemp -d /tmp/ratchet-telpeak-XXXXXX)
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cp "$RATCHET_SRC/tests/campaign/vadd.c" "$W/"
cd "$W"
echo "sm_clock_mhz=990 max_clock_mhz=1980 temp_c=50 throttle=none" > readings
RATCHET_TELEMETRY_FAKE="$W/readings"
export RATCHET_TELEMETRY_FAKE
cat > spec.yaml <<'Y'
name: telpeak
benchmarks:
  - name: vadd
    kernel:
      backend: host
      module: vadd.c
      name: vadd
      args:
        - {buffer: z, dtype: f32, count: 65536, output: true}
        - {buffer: x, dtype: f32, count: 65536}
        - {buffer: y, dtype: f32, count: 65536}
        - {scalar: n, dtype: i32, value: 65536}
      launch: {grid: 4}
      bytes: 786432
      flops: 65536
      reference: {name: vadd_ref}
      max_time: 0.2s
      min_samples: 5
objective: {metric: vadd.gbps, goal: max, min_gain: 50%}
constraints: [telemetry.temp_c <= 85]
repeats: {min: 3, max: 3}
telemetry: {period: 10ms}
variants:
  - {name: one-thread, env: {RATCHET_HOST_THREADS: "1"}}
Y
"$RATCHET_BIN" --db c.db devices --peak --peak-bytes 4194304 --backend host > /dev/null
"$RATCHET_BIN" --db c.db run --quiet spec.yaml
q() { sqlite3 c.db "$1"; }
q "SELECT value FROM env_facts WHERE key='telemetry.device'" | grep -qx "host:0" || fail "device: $(q "SELECT value FROM env_facts WHERE key='telemetry.device'")"
n=$(q "SELECT count(*) FROM measurements WHERE benchmark='vadd' AND metric='pct_peak_flops'")
[ "$n" -ge 6 ] || fail "$n samples with pct_peak_flops"
bad=$(q "SELECT count(*) FROM measurements a JOIN measurements b ON a.iteration_id=b.iteration_id AND a.arm=b.arm AND a.rep=b.rep
         WHERE a.benchmark='vadd' AND b.benchmark='vadd' AND a.metric='pct_peak_flops' AND b.metric='pct_peak_flops_held'
         AND abs(b.value - 2 * a.value) <= 1e-9 * a.value")
[ "$bad" -eq "$n" ] || fail "$bad of $n samples have the held-clock percentage at twice the nominal one"
t=$(q "SELECT count(*) FROM measurements WHERE benchmark='telemetry' AND metric='sm_clock_mhz' AND value=990")
[ "$t" -eq "$n" ] || fail "$t of $n samples with the held clock"
"$RATCHET_BIN" --db c.db show --full 1:1 > show.out
grep -q "vadd.pct_peak_flops .*% of peak at the nominal clock" show.out || { cat show.out; fail "show: nominal"; }
grep -q "vadd.pct_peak_flops_held .*% of peak at the SM clock held" show.out || { cat show.out; fail "show: held"; }
grep "pct_peak" show.out

# A device that cannot be read is said once; the campaign goes on (host
# readings only). Telemetry disabled stores nothing.
unset RATCHET_TELEMETRY_FAKE
sed -e 's/^name: telpeak/name: telmissing/' -e 's/^telemetry: .*/telemetry: {period: 10ms, device: "ze:3"}/' \
	-e '/^constraints:/d' spec.yaml > missing.yaml
"$RATCHET_BIN" --db m.db run --quiet missing.yaml
why=$(sqlite3 m.db "SELECT group_concat(value, ' | ') FROM env_facts WHERE key='telemetry.device'")
case "$why" in
	"ze:3 | ze:3: no readings: ze: "*) ;;
	*) fail "unreadable device: '$why'" ;;
esac
[ "$(sqlite3 m.db "SELECT count(*) FROM env_facts WHERE key='telemetry.device'")" -eq 2 ] || fail "said more than once"
sed -e 's/^name: telpeak/name: teloff/' -e 's/^telemetry: .*/telemetry: {enabled: false}/' -e '/^constraints:/d' \
	spec.yaml > off.yaml
"$RATCHET_BIN" --db off.db run --quiet off.yaml
[ "$(sqlite3 off.db "SELECT count(*) FROM measurements WHERE benchmark='telemetry' OR metric='pct_peak_flops_held'")" -eq 0 ] ||
	fail "telemetry stored while disabled"
[ "$(sqlite3 off.db "SELECT count(*) FROM env_facts WHERE key LIKE 'telemetry.%'")" -eq 0 ] || fail "telemetry facts while disabled"
echo "ok: $n samples with percent of peak at the held clock"
