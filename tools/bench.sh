#!/bin/sh
# make bench: builds, then runs every bench_* program and prints its figures.
# Each program prints "figure: value unit (target ...)" lines.
set -eu
B=${1:-build}
export RATCHET_BIN="$PWD/$B/ratchet" RATCHET_SRC="$PWD" RATCHET_BUILD="$PWD/$B"
export RATCHET_GSM8K_DIR="$PWD/../shared/data/gsm8k"
for b in "$B"/bench_*; do
	[ -x "$b" ] || continue
	echo "== $(basename "$b")"
	"$b" || echo "$(basename "$b"): failed with status $?"
done
