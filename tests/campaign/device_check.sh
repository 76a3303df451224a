#!/bin/sh
# A kernel campaign refuses to compare measurements taken on different
# devices: the baseline is measured, the recorded device is then changed (as
# if the campaign had been started on another machine) and the resumed
# campaign must mark its next iteration invalid instead of comparing.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
command -v cc >/dev/null || { echo "no C compiler for the host kernel"; exit 77; }
W=$(mktemp -d /tmp/ratchet-devcheck-XXXXXX)
trap 'rm -rf "$W"' EXIT
cp "$RATCHET_SRC/tests/campaign/vadd.c" "$W/"
cat > "$W/spec.yaml" <<'Y'
name: devcheck
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
      reference: {name: vadd_ref}
      max_time: 0.2s
      min_samples: 5
objective: {metric: vadd.gbps, goal: max, min_gain: 50%}
repeats: {min: 3, max: 3}
variants:
  - {name: one-thread, env: {RATCHET_HOST_THREADS: "1"}}
Y
cd "$W"
"$RATCHET_BIN" --db c.db run --quiet --max-iterations 1 spec.yaml
dev=$(sqlite3 c.db "SELECT value FROM env_facts WHERE key='device'")
echo "recorded device: $dev"
[ -n "$dev" ] || { echo "FAIL: the baseline's device was not recorded"; exit 1; }
sqlite3 c.db "UPDATE env_facts SET value='cuda:0 NVIDIA H200 [GPU-elsewhere]' WHERE key='device'"
"$RATCHET_BIN" --db c.db run --quiet --resume spec.yaml
st=$(sqlite3 c.db "SELECT state || ': ' || reason FROM iterations WHERE variant='one-thread'")
echo "$st"
case "$st" in
	"invalid: measurement invalid: device changed: measured on '$dev', the campaign's baseline on 'cuda:0 NVIDIA H200 [GPU-elsewhere]'"*) ;;
	*) echo "FAIL: measurements from another device were compared"; exit 1 ;;
esac
n=$(sqlite3 c.db "SELECT count(*) FROM measurements m JOIN iterations i ON i.id = m.iteration_id WHERE i.variant='one-thread' AND m.valid = 0 AND m.invalid_reason LIKE 'device changed%'")
[ "$n" -gt 0 ] || { echo "FAIL: the other device's samples were not kept marked invalid"; exit 1; }
n=$(sqlite3 c.db "SELECT count(*) FROM metric_stats m JOIN iterations i ON i.id = m.iteration_id WHERE i.variant='one-thread'")
[ "$n" -eq 0 ] || { echo "FAIL: invalid samples entered the statistics"; exit 1; }
echo PASS
