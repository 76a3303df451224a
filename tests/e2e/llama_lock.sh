#!/bin/sh
# Two tools/llama.sh at once on an empty cache folder: the real script, the
# real npm package (the one `make llama` cached; exit 77 without it), a real
# clone of its bundle, and a stand-in `cmake` first on PATH that takes two
# seconds per call and notes any call that overlaps another. The first
# clones and builds under <dir>/patch.lock; the second waits, then prints
# the first's folder without building. Before the lock, both cloned and
# built into one folder, and one failed.
set -eu
: "${RATCHET_SRC:?}"
real="${XDG_CACHE_HOME:-$HOME/.cache}/ratchet/llama.cpp/node-llama-cpp-3.21.1.tgz"
[ -f "$real" ] || { echo "SKIP: no node-llama-cpp package cached; 'make llama' fetches it"; exit 77; }
W=$(mktemp -d /tmp/ratchet-llama-lock-XXXXXX)
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$W/cache" "$W/bin"
ln -s "$real" "$W/cache/node-llama-cpp-3.21.1.tgz"
cat > "$W/bin/cmake" <<C
#!/bin/sh
[ -e "$W/running" ] && echo overlap >> "$W/cmake.log"
touch "$W/running"
echo "cmake \$*" >> "$W/cmake.log"
sleep 2
if [ "\$1" = --build ]; then
	mkdir -p "\$2/bin" && printf '#!/bin/sh\n' > "\$2/bin/llama-server" && chmod +x "\$2/bin/llama-server"
fi
rm -f "$W/running"
C
chmod +x "$W/bin/cmake"
export RATCHET_LLAMA_CACHE="$W/cache" LLAMA_NICE=0 PATH="$W/bin:$PATH"
sh "$RATCHET_SRC/tools/llama.sh" > "$W/out1" 2> "$W/err1" &
p1=$!
sh "$RATCHET_SRC/tools/llama.sh" > "$W/out2" 2> "$W/err2" &
p2=$!
rc1=0 rc2=0
wait $p1 || rc1=$?
wait $p2 || rc2=$?
[ $rc1 = 0 ] && [ $rc2 = 0 ] || { cat "$W/err1" "$W/err2"; fail "exit codes $rc1 and $rc2"; }
d=$(tail -1 "$W/out1")
[ -x "$d/llama-server" ] && [ "$(tail -1 "$W/out2")" = "$d" ] || fail "printed '$d' and '$(tail -1 "$W/out2")'"
! grep -q overlap "$W/cmake.log" || { cat "$W/cmake.log"; fail "two builds ran at once"; }
[ "$(grep -c -- '--build' "$W/cmake.log")" = 1 ] || { cat "$W/cmake.log"; fail "built more than once"; }
cat "$W/err1" "$W/err2" | grep -q "was built while this one waited" || { cat "$W/err1" "$W/err2"; fail "no word of the wait"; }
echo PASS
