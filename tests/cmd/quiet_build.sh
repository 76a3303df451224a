#!/bin/sh
# Quiet builds: `make demo` builds through tools/build-quiet.sh, which shows
# the build as one line, not cmake's hundreds, and still prints a failed
# build's errors in full. A stand-in cmake on PATH prints 480 progress lines
# (and an error, when told to fail).
# Cases: make demo's recipe uses the quiet build; a good build prints one
# line; a failed one exits non-zero with the compiler error and without the
# progress lines; the full output is kept in BUILD/build.log.
set -u
SRC=${RATCHET_SRC:?}
. "$(dirname "$0")/lib.sh"
scratch quiet

make -n -C "$SRC" demo BUILD="$tmp/b" 2>/dev/null | grep -q 'tools/build-quiet.sh' &&
	ok "make demo builds through tools/build-quiet.sh" || no "make demo does not use the quiet build"

mkdir "$tmp/bin"
cat >"$tmp/bin/cmake" <<'FAKE'
#!/bin/sh
if [ "$1" = --build ]; then
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
PATH="$tmp/bin:$PATH" FAKE_FAIL=1 sh "$SRC/tools/build-quiet.sh" b 2 >out.txt 2>&1
rc=$?
[ $rc -eq 2 ] && ok "a failed build exits 2" || no "failed build: exit $rc"
grep -q "f7.c:3:1: error: expected ';' before '}' token" out.txt && ok "the error is shown in full" ||
	no "the error is missing: $(cat out.txt)"
grep -q 'Building C object' out.txt && no "progress lines printed on failure" || ok "no progress lines on failure"
finish
