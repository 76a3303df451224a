# Sourced by the scripts that run on the GPU machine (run-on-h200.sh,
# run-campaigns-on-h200.sh): makes $OUT, sends everything the script prints
# to $OUT/$1 as well, and sets up the carried .devdeps (headers and -dev
# libraries), linking each -dev .so whose target the image already has
# (libcrypto, libpcre2) to the image's copy.
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
