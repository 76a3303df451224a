# Sourced by the scripts that run on the GPU machine (run-on-h200.sh,
# run-campaigns-on-h200.sh): makes $OUT, sends everything the script prints
# to $OUT/$1 as well, and sets up the carried .devdeps (headers and -dev
# libraries), linking each -dev .so whose target the image already has
# (libcrypto, libpcre2) to the image's copy; h200_build builds targets.
#   . experiments/cuda-sweep/h200-env.sh LOG_NAME
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
exec > >(tee "$OUT/$1") 2>&1
. .devdeps/setup.sh
L=/tmp/devdeps/usr/lib/x86_64-linux-gnu
for f in "$L"/*.so; do
	[ -e "$f" ] && continue
	t=$(readlink "$f"); [ -e "/lib/x86_64-linux-gnu/$t" ] && ln -sf "/lib/x86_64-linux-gnu/$t" "$f"
done

# h200_build DIR TARGET...: configures a Release build in DIR (no HIP, no
# Level Zero, no tests) and builds the targets, the logs in $OUT; on an
# error prints it and exits.
h200_build() {
	_b=$1
	shift
	cmake -S . -B "$_b" -DRATCHET_HIP=OFF -DRATCHET_ZE=OFF -DRATCHET_TESTS=OFF -DCMAKE_BUILD_TYPE=Release \
		>"$OUT/cmake.log" 2>&1 || { tail -30 "$OUT/cmake.log"; exit 1; }
	cmake --build "$_b" -j16 --target "$@" >"$OUT/build.log" 2>&1 ||
		{ grep -E -A3 'error' "$OUT/build.log" | head -40; exit 1; }
}
