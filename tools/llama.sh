#!/bin/sh
# Gets a real llama.cpp: fetches the pinned npm package node-llama-cpp (which
# ships llama.cpp's source as a git bundle), checks its sha256, clones the
# bundle and builds only llama-server, llama-bench and llama-batched-bench
# into a cache folder keyed by release and backend, reused by later runs and
# by fresh clones. Prints the folder of the binaries on its last line.
#
#   tools/llama.sh [--cuda | --portable | --static] [--jobs N] [--check]
#
#   --cuda   build with -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90
#   --portable  a CPU build for any x86-64 with AVX2, FMA, F16C and BMI2
#            (GGML_NATIVE=OFF; backend cpu-avx2), to be made on one machine
#            and used on another with the same or a newer glibc; the CPU
#            default is -march=native
#   --static the portable CPU build linked statically (backend cpu-static):
#            runs on any x86-64 Linux with AVX2 whatever its glibc, but has
#            no shared objects (provenance hashes the executable alone) and
#            uses ggml's own thread pool (GGML_OPENMP=OFF)
#   --jobs N parallel compile jobs (default 2)
#   --check  build nothing new: print the folder when the binaries are
#            cached, exit 3 when they are not
#
# A cached build whose recorded CMake options (<dir>/configured) are not
# this script's, one made before an option was added, is configured again
# and rebuilt incrementally before its folder is printed (--check too),
# holding <dir>/patch.lock like the campaigns that patch its tree.
#
# Environment: RATCHET_LLAMA_CACHE (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/ratchet/llama.cpp), LLAMA_NICE (default 10).
# Layout of <cache>/<release>-<backend>/: src/ (the clone; a patch variant
# copies it), build/ (CMake's folder, bin/ inside), build.log, configured
# (the CMake options of the last configure), built (the first build's
# seconds, written last: the build is complete when it exists).
set -eu

PKG=node-llama-cpp
PKG_VERSION=3.21.1
# sha256 of node-llama-cpp-3.21.1.tgz as `npm pack` fetched it on 2026-12-04.
PKG_SHA256=7a231d6bafa14142a1cbed9893d4ec5bc6041b2a5f5939a623accaab4203c11f
TARGETS="llama-server llama-bench llama-batched-bench"

backend=cpu
jobs=2
check=0
while [ $# -gt 0 ]; do
	case "$1" in
	--cuda) backend=cuda ;;
	--portable) backend=cpu-avx2 ;;
	--static) backend=cpu-static ;;
	--jobs) jobs="$2"; shift ;;
	--check) check=1 ;;
	*) echo "llama.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
	shift
done

cache="${RATCHET_LLAMA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ratchet/llama.cpp}"
mkdir -p "$cache"
tgz="$cache/$PKG-$PKG_VERSION.tgz"

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

# The package, checked every time it is used (a cached file that changed is
# fetched again, then must match).
fetch_pkg() {
	if [ -f "$tgz" ] && [ "$(sha_of "$tgz")" = "$PKG_SHA256" ]; then return 0; fi
	command -v npm >/dev/null 2>&1 || { echo "llama.sh: npm not found (make deps installs it)" >&2; exit 1; }
	tmp=$(mktemp -d "$cache/pack.XXXXXX")
	(cd "$tmp" && npm pack --silent "$PKG@$PKG_VERSION" >/dev/null)
	got=$(sha_of "$tmp/$PKG-$PKG_VERSION.tgz")
	if [ "$got" != "$PKG_SHA256" ]; then
		echo "llama.sh: $PKG-$PKG_VERSION.tgz sha256 $got, expected $PKG_SHA256" >&2
		rm -rf "$tmp"; exit 1
	fi
	mv "$tmp/$PKG-$PKG_VERSION.tgz" "$tgz"
	rm -rf "$tmp"
}

# The release: the bundle's tag (llama/llama.cpp.info.json) and its commit.
release_of() {
	tag=$(tar -xzOf "$tgz" package/llama/llama.cpp.info.json | sed -n 's/.*"tag": *"\([^"]*\)".*/\1/p')
	echo "${tag:-unknown}"
}

# The CMake options of a build for backend $1.
# GIT_EXE=OFF: ggml's CMakeLists.txt (llama.cpp 80fb11a) runs `git rev-parse
# --short HEAD` and `git diff-index --quiet HEAD -- .` at every configure and
# compiles "<commit>-dirty" into libggml-base when the second says the tree
# differs. common/CMakeLists.txt makes .git/index a configure dependency, so
# a git command that rewrites the index (`git status` refreshing its stat
# data, as ratchet's provenance does at each launch) makes the next build
# configure again, and diff-index compares stat data without refreshing it,
# so a file restored to its committed bytes still counts as changed. After a
# ggml-cpu patch and its revert, libggml-base therefore held "-dirty" or not
# depending on which git commands had run in between, and a launch of the
# unchanged engine differed from the first. With GIT_EXE set to a false value
# (find_program keeps a cached value) ggml skips both commands and takes
# llama.cpp's own commit (cmake/build-info.cmake: rev-parse only, no dirty
# flag): the bytes of a clean build, whatever the index says.
flags_of() {
	f="-DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF \
-DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DGIT_EXE=OFF"
	avx2="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
-DGGML_AVX512=OFF"
	case $1 in
	cuda) f="$f -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90" ;;
	cpu-avx2) f="$f $avx2" ;;
	cpu-static) f="$f $avx2 -DBUILD_SHARED_LIBS=OFF -DGGML_OPENMP=OFF -DCMAKE_EXE_LINKER_FLAGS=-static" ;;
	esac
	echo "$f"
}

backend_of() {
	case $1 in
	*-cpu-avx2) echo cpu-avx2 ;;
	*-cpu-static) echo cpu-static ;;
	*-cuda) echo cuda ;;
	*) echo cpu ;;
	esac
}

# Configure $1/build from $1/src with options $2 and build the tools,
# appending to $1/build.log; on success $1/configured holds $2.
build_tree() {
	# shellcheck disable=SC2086
	if ! { nice -n "${LLAMA_NICE:-10}" cmake -S "$1/src" -B "$1/build" $2 &&
		nice -n "${LLAMA_NICE:-10}" cmake --build "$1/build" -j "$jobs" --target $TARGETS; } \
		>>"$1/build.log" 2>&1; then
		tail -20 "$1/build.log" >&2
		echo "llama.sh: build failed, log in $1/build.log" >&2
		return 1
	fi
	echo "$2" >"$1/configured"
}

# A cached build configured with other options than flags_of's (or before
# they were recorded) is configured again and rebuilt incrementally, under
# the lock that campaigns patching its tree hold. A build without its tree
# (a static build made elsewhere) is left as it is.
settle() {
	[ -f "$1/build/CMakeCache.txt" ] && [ -f "$1/src/CMakeLists.txt" ] || return 0
	want=$(flags_of "$(backend_of "$1")")
	[ "$(cat "$1/configured" 2>/dev/null)" = "$want" ] && return 0
	echo "llama.sh: configuring $1 with this script's options again (an incremental rebuild)" >&2
	(
		flock 9
		[ "$(cat "$1/configured" 2>/dev/null)" = "$want" ] || build_tree "$1" "$want"
	) 9>"$1/patch.lock"
}

# A complete build: its `built` is written last, after the binaries.
complete() { [ -f "$1/built" ] && [ -x "$1/build/bin/llama-server" ]; }

# Fast path: a complete build in the cache needs neither npm nor the network.
# A CPU build is either kind (native or portable).
kinds="$cache/*-$backend"
[ "$backend" = cpu ] && kinds="$cache/*-cpu $cache/*-cpu-avx2 $cache/*-cpu-static"
for d in $kinds; do
	if complete "$d"; then
		if [ "$check" = 1 ] || [ "$(cat "$d/pkg" 2>/dev/null)" = "$PKG-$PKG_VERSION" ]; then
			settle "$d" || exit 1
			echo "$d/build/bin"; exit 0
		fi
	fi
done
[ "$check" = 1 ] && { echo "llama.sh: no $backend build of llama.cpp in $cache" >&2; exit 3; }

fetch_pkg
release=$(release_of)
work=$(mktemp -d "$cache/bundle.XXXXXX")
tar -xzf "$tgz" -C "$work" package/llama/gitRelease.bundle
commit=$(git bundle list-heads "$work/package/llama/gitRelease.bundle" | head -1 | cut -c1-7)
dir="$cache/$release-$commit-$backend"
mkdir -p "$dir"
# One first build of a folder at a time, under the lock that settle and the
# campaigns patching its tree take: two at once (two checkouts' `make llama`,
# or a run killed while its build goes on) wrote into one build/ and failed
# ("ranlib: 'libserver-context.a': No such file"). The second waits, then
# takes the first's build.
exec 9>"$dir/patch.lock"
flock 9
if complete "$dir"; then
	rm -rf "$work"
	echo "llama.sh: $dir was built while this one waited for it" >&2
	echo "$dir/build/bin"
	exit 0
fi
if [ ! -f "$dir/src/CMakeLists.txt" ]; then
	rm -rf "$dir/src"
	git clone -q "$work/package/llama/gitRelease.bundle" "$dir/src" 2>/dev/null
fi
rm -rf "$work"
echo "$PKG-$PKG_VERSION" >"$dir/pkg"

start=$(date +%s)
echo "llama.sh: building $TARGETS ($release $commit, $backend, -j$jobs) in $dir" >&2
: >"$dir/build.log"
build_tree "$dir" "$(flags_of "$backend")" || exit 1
end=$(date +%s)
echo "$((end - start))" >"$dir/built"
echo "llama.sh: built in $((end - start)) s (load average $(cut -d' ' -f1-3 /proc/loadavg))" >&2
echo "$dir/build/bin"
