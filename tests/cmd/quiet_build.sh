#!/bin/sh
# Quiet builds: `make demo` builds through tools/build-quiet.sh, which shows
# the build as one line, not cmake's hundreds, and still prints a failed
# build's errors in full. A stand-in cmake on PATH prints 480 progress lines
# (and an error, when told to fail).
# Cases: make demo's recipe uses the quiet build and builds only ratchet
# and simserve; a good build prints one
# line; a failed one exits non-zero with the compiler error and without the
# progress lines; the full output is kept in BUILD/build.log.
set -u
SRC=${RATCHET_SRC:?}
. "$(dirname "$0")/lib.sh"
scratch quiet

make -n -C "$SRC" demo BUILD="$tmp/b" 2>/dev/null > "$tmp/demo-n.txt"
grep -q 'tools/build-quiet.sh' "$tmp/demo-n.txt" &&
	ok "make demo builds through tools/build-quiet.sh" || no "make demo does not use the quiet build"
# a fresh clone's demo builds what it runs, not the tests, fuzzers and benchmarks (issue 23)
for m in demo demo-serving; do
	make -n -C "$SRC" $m BUILD="$tmp/b" 2>/dev/null | grep -q 'RATCHET_TARGETS="ratchet simserve" sh tools/build-quiet.sh' &&
		ok "make $m builds only ratchet and simserve" || no "make $m builds more than it runs"
done

mkdir "$tmp/bin"
cat >"$tmp/bin/cmake" <<'FAKE'
#!/bin/sh
if [ "$1" = --build ]; then
	echo "$*" > args.txt
	i=0
	while [ $i -lt 480 ]; do echo "[ $((i * 100 / 480))%] Building C object CMakeFiles/x.dir/f$i.c.o"; i=$((i + 1)); done
	if [ -n "${FAKE_FAIL:-}" ]; then echo "f7.c:3:1: error: expected ';' before '}' token"; exit 2; fi
	echo "[100%] Built target ratchet"
	exit 0
fi
echo "-- Configuring done"
mkdir -p "$4" && : >"$4/CMakeCache.txt"
FAKE
chmod +x "$tmp/bin/cmake"
cd "$tmp" || exit 1
PATH="$tmp/bin:$PATH" sh "$SRC/tools/build-quiet.sh" b 2 >out.txt 2>&1
rc=$?
[ $rc -eq 0 ] && [ "$(wc -l <out.txt)" -eq 1 ] && grep -q '^built ratchet in' out.txt &&
	ok "a good build is one line: $(cat out.txt)" || no "good build: exit $rc, $(wc -l <out.txt) lines: $(head -3 out.txt)"
[ "$(grep -c 'Building C object' b/build.log)" -eq 480 ] && ok "build.log keeps the output" || no "build.log"
grep -q -- '--target' args.txt && no "a plain build names targets: $(cat args.txt)" || ok "a plain build builds all"
PATH="$tmp/bin:$PATH" RATCHET_TARGETS="ratchet simserve" sh "$SRC/tools/build-quiet.sh" b 2 >out.txt 2>&1
[ "$(cat args.txt)" = "--build b -j 2 --target ratchet simserve" ] && grep -q '^built ratchet simserve in' out.txt &&
	ok "RATCHET_TARGETS builds only those: $(cat args.txt)" || no "RATCHET_TARGETS: $(cat args.txt) / $(cat out.txt)"
PATH="$tmp/bin:$PATH" FAKE_FAIL=1 sh "$SRC/tools/build-quiet.sh" b 2 >out.txt 2>&1
rc=$?
[ $rc -eq 2 ] && ok "a failed build exits 2" || no "failed build: exit $rc"
grep -q "f7.c:3:1: error: expected ';' before '}' token" out.txt && ok "the error is shown in full" ||
	no "the error is missing: $(cat out.txt)"
grep -q 'Building C object' out.txt && no "progress lines printed on failure" || ok "no progress lines on failure"
finish
