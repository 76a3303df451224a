#!/bin/sh
# make bench: builds, then runs every bench_* program and prints its figures.
# Each program prints "figure: value unit (target ...)" lines.
set -eu
B=${1:-build}
export RATCHET_BIN="$PWD/$B/ratchet" RATCHET_SRC="$PWD" RATCHET_BUILD="$PWD/$B"
export RATCHET_GSM8K_DIR="$PWD/../shared/data/gsm8k"
# bench_search replays experiments/search-*/sweep.jsonl and any other sweep
# files named here (space-separated; format in docs/search.md).
export RATCHET_SWEEPS="${RATCHET_SWEEPS:-}"
for b in "$B"/bench_*; do
	[ -x "$b" ] || continue
	echo "== $(basename "$b")"
	"$b" || echo "$(basename "$b"): failed with status $?"
done
