#!/bin/sh
# The build as one progress line (`make demo`, `make demo-serving`): cmake's
# output goes to BUILD/build.log; on a terminal one line counts the percent
# in place, elsewhere nothing until the end; then one line saying it is
# built. A failed build prints every line of the log but cmake's progress
# lines (the compiler's errors in full), and exits with cmake's status.
# $RATCHET_TARGETS (space-separated) builds only those targets: the demos
# build ratchet and simserve, not the tests, fuzzers and benchmarks.
#   tools/build-quiet.sh BUILD JOBS [CMAKE CONFIGURE FLAGS...]
set -u
B=$1 J=$2
shift 2
mkdir -p "$B"
log="$B/build.log" status="$B/.build-status"
tty=0
[ -t 1 ] && tty=1
t0=$(date +%s)
{
	{
		if [ ! -f "$B/CMakeCache.txt" ]; then
			cmake -S . -B "$B" "$@" || { echo $? >"$status"; exit 0; }
		fi
		# shellcheck disable=SC2086 # one word per target
		cmake --build "$B" -j "$J" ${RATCHET_TARGETS:+--target $RATCHET_TARGETS}
		echo $? >"$status"
	} 2>&1
} | tee "$log" | awk -v tty="$tty" '
	# make: "[ 45%] Building ..."; ninja: "[12/345] Building ..."
	match($0, /^\[ *[0-9]+%\]/) { pct = substr($0, 2, RLENGTH - 3) + 0 }
	match($0, /^\[[0-9]+\/[0-9]+\]/) { split(substr($0, 2, RLENGTH - 2), f, "/"); pct = int(f[1] * 100 / f[2]) }
	tty == 1 && pct != last { printf "\rbuilding ratchet: %3d%%", pct; fflush(); last = pct }
	END { if (tty == 1) printf "\r\033[K" }'
rc=$(cat "$status" 2>/dev/null || echo 1)
rm -f "$status"
if [ "$rc" -ne 0 ]; then
	grep -v -E '^\[ *[0-9]+%\]|^\[[0-9]+/[0-9]+\]' "$log" >&2
	echo "build failed (exit $rc); the whole output is in $log" >&2
	exit "$rc"
fi
echo "built ${RATCHET_TARGETS:-ratchet} in $(($(date +%s) - t0))s (output in $log)"
