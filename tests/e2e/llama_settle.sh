#!/bin/sh
# tools/llama.sh with a cached build configured by older options: a fake
# cache (RATCHET_LLAMA_CACHE) whose "llama.cpp" is a CMake project of three
# custom targets, configured without -DGIT_EXE=OFF and with no `configured`
# record, as the builds made before that option. `--check` configures it
# again with the script's options, builds the three targets, records the
# options and prints the folder; a second `--check` builds nothing. A build
# without its trees (made elsewhere) is printed and left alone.
set -eu
: "${RATCHET_SRC:?}"
command -v cmake >/dev/null || { echo "cmake missing"; exit 1; }
W=$(mktemp -d /tmp/ratchet-llama-settle-XXXXXX)
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
d=$W/cache/v0-abc1234-cpu
mkdir -p "$d/src" "$d/build/bin"
cat > "$d/src/CMakeLists.txt" <<'C'
cmake_minimum_required(VERSION 3.14)
project(fake NONE)
foreach(t llama-server llama-bench llama-batched-bench)
  add_custom_target(${t} COMMAND ${CMAKE_COMMAND} -E echo "target ${t} GIT_EXE=${GIT_EXE}")
endforeach()
C
cmake -S "$d/src" -B "$d/build" > "$W/old.log" 2>&1 || { cat "$W/old.log"; fail "configuring the fake tree"; }
printf '#!/bin/sh\n' > "$d/build/bin/llama-server" && chmod +x "$d/build/bin/llama-server"
echo 1 > "$d/built"
echo node-llama-cpp-3.21.1 > "$d/pkg"
export RATCHET_LLAMA_CACHE="$W/cache" LLAMA_NICE=0
got=$(sh "$RATCHET_SRC/tools/llama.sh" --check 2> "$W/err1") || { cat "$W/err1"; fail "--check exited $?"; }
[ "$got" = "$d/build/bin" ] || fail "--check printed '$got', want $d/build/bin"
grep -q "configuring $d with this script's options again" "$W/err1" || { cat "$W/err1"; fail "no word of the reconfigure"; }
grep -q -- "-DGIT_EXE=OFF" "$d/configured" || fail "the options are not recorded: $(cat "$d/configured" 2>&1)"
grep -q "^GIT_EXE:[A-Z]*=OFF$" "$d/build/CMakeCache.txt" || fail "the tree was not configured with GIT_EXE=OFF"
grep -q "target llama-batched-bench GIT_EXE=OFF" "$d/build.log" || { cat "$d/build.log"; fail "the targets were not built"; }
# up to date: nothing configured or built again
cp "$d/build.log" "$W/log1"
got=$(sh "$RATCHET_SRC/tools/llama.sh" --check 2> "$W/err2") || fail "second --check exited $?"
[ "$got" = "$d/build/bin" ] && [ ! -s "$W/err2" ] || { cat "$W/err2"; fail "second --check: '$got'"; }
cmp -s "$d/build.log" "$W/log1" || fail "the second --check built again"
# a build without its trees is printed, untouched
rm -rf "$d/src" "$d/configured"
got=$(sh "$RATCHET_SRC/tools/llama.sh" --check 2> "$W/err3") || { cat "$W/err3"; fail "--check of a bare build exited $?"; }
[ "$got" = "$d/build/bin" ] && [ ! -e "$d/configured" ] || fail "a build without its source was touched"
echo PASS
