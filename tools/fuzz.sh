#!/bin/sh
# make fuzz, and the fuzz step of .ci/run: builds every harness of
# tests/fuzz.cmake with clang's libFuzzer under AddressSanitizer and
# UndefinedBehaviorSanitizer (leaks included), then fuzzes each one for
# FUZZ_TIME seconds, FUZZ_JOBS at a time, starting from its committed seed
# and crash corpora (tests/fuzz/NAME/seed, crashes). New inputs that reach
# new code go to BUILD/corpus/NAME (kept between runs, never committed).
#
# A crash, a sanitizer report, a leak, a failed FUZZ_CHECK or a timeout
# (FUZZ_TIMEOUT seconds on one input) fails the run: the input is saved as
# BUILD/artifacts/NAME/crash-* (or leak-*, timeout-*), and the log and the
# command that replays it are printed. Fix the bug, then copy the input to
# tests/fuzz/NAME/crashes/ so that make check replays it for good.
#
# Without clang or its libFuzzer runtime (Debian: clang, libclang-rt-14-dev;
# `make deps` installs both) it says so and exits 0: the corpora still
# replay in make check with any compiler.
#
#   sh tools/fuzz.sh [NAME...]     every harness, or the ones named
#   FUZZ_TIME=25 FUZZ_JOBS=2 FUZZ_TIMEOUT=10 FUZZ_BUILD=build-fuzz FUZZ_CC=clang
set -eu
cd "$(dirname "$0")/.."
B=${FUZZ_BUILD:-build-fuzz}
T=${FUZZ_TIME:-25}
J=${FUZZ_JOBS:-2}
TO=${FUZZ_TIMEOUT:-10}
CC=${FUZZ_CC:-clang}

# --one NAME: fuzz one harness (the parallel runs below call this).
if [ "${1:-}" = "--one" ]; then
	h=$2
	mkdir -p "$B/corpus/$h" "$B/artifacts/$h" "$B/tmp/$h"
	rc=0
	TMPDIR="$PWD/$B/tmp/$h" \
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		"$B/fuzz_$h" -max_total_time="$T" -timeout="$TO" -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$B/artifacts/$h/" \
		"$B/corpus/$h" "tests/fuzz/$h/seed" "tests/fuzz/$h/crashes" \
		>"$B/logs/$h.log" 2>&1 || rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$B/logs/$h.log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$B/logs/$h.log" | tail -n 1)
	corpus=$(ls "$B/corpus/$h" | wc -l)
	seeds=$(ls "tests/fuzz/$h/seed" | wc -l)
	crashes=$(ls "$B/artifacts/$h" | wc -l)
	printf '%-12s %10s execs %7s/s  corpus %5s (seed %s)  crashes %s\n' "$h" "${execs:-?}" \
		"${rate:-?}" "$corpus" "$seeds" "$crashes"
	if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
		echo "fuzz: $h FAILED (status $rc); from $B/logs/$h.log:"
		grep -aE 'ERROR|fuzz check failed|runtime error|SUMMARY|^ +#[0-9]+ .* in [a-z_]+ /' \
			"$B/logs/$h.log" | grep -v 'libFuzzer: deadly signal' | head -n 30 | sed 's/^/    /'
		for a in "$B/artifacts/$h"/*; do
			[ -e "$a" ] && echo "    replay: $B/fuzz_$h $a"
		done
		exit 1
	fi
	exit 0
fi

skip() {
	echo "fuzz: skipped: $1"
	echo "fuzz: (Debian: apt-get install clang libclang-rt-14-dev, or make deps; the corpora still replay in make check)"
	exit 0
}
command -v "$CC" >/dev/null 2>&1 || skip "no $CC"
mkdir -p "$B/logs"
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' >"$B/probe.c"
"$CC" -fsanitize=fuzzer,address,undefined "$B/probe.c" -o "$B/probe" >"$B/logs/probe.log" 2>&1 ||
	skip "$CC cannot link a libFuzzer program ($(head -n 1 "$B/logs/probe.log"))"

echo "fuzz: building the harnesses with $CC (libFuzzer, ASan, UBSan) in $B"
cmake -S . -B "$B" -DCMAKE_C_COMPILER="$CC" -DRATCHET_FUZZ=ON -DRATCHET_SANITIZE=ON \
	-DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	>"$B/logs/configure.log" 2>&1 || { cat "$B/logs/configure.log"; exit 1; }
cmake --build "$B" -j "$J" --target fuzz_harnesses >"$B/logs/build.log" 2>&1 ||
	{ tail -n 60 "$B/logs/build.log"; exit 1; }

if [ $# -gt 0 ]; then
	names="$*"
else
	names=$(for d in tests/fuzz/*/seed; do basename "$(dirname "$d")"; done)
fi
# Artifacts of earlier runs are not this run's crashes.
for h in $names; do
	[ -x "$B/fuzz_$h" ] || { echo "fuzz: no harness $h (tests/fuzz.cmake)"; exit 2; }
	rm -rf "$B/artifacts/$h" "$B/tmp/$h"
done
n=$(echo $names | wc -w)
echo "fuzz: $n harnesses, ${T}s each, $J at a time"
status=0
echo $names | tr ' ' '\n' | xargs -P "$J" -I{} sh tools/fuzz.sh --one {} || status=$?
if [ $status -ne 0 ]; then
	echo "fuzz: FAILED: a harness found a crash (see above)"
	exit 1
fi
echo "fuzz: no crashes"
