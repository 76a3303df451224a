#!/bin/sh
# The pool campaign twice, on a copy of this folder: on the spec's devices
# (parallel), then on its first device alone (serial, `--devices` over the
# spec's devices:), each in its own database. Prints both wall times, both
# decision lists, and whether they are the same.
#   usage: sh run.sh BUILD_DIR [cuda|host] [OUT_DIR]
#   cuda: spec.yaml (two GPUs); sgemm.cubin is built with nvcc from
#         ../cuda-sgemm/sgemm.cu (or taken from BUILD_DIR/cuda/sgemm.cubin)
#   host: host.yaml on [host:0, host:1], with ../cpu-gemm/gemm.c beside it
set -eu
B=$(cd "${1:?usage: run.sh BUILD_DIR [cuda|host] [OUT_DIR]}" && pwd)
KIND=${2:-cuda}
H=$(cd "$(dirname "$0")" && pwd)
O=${3:-$(mktemp -d /tmp/ratchet-pool-h200-XXXXXX)}
mkdir -p "$O"
setup() { # setup DIR: the campaign's workdir
	mkdir -p "$1"
	if [ "$KIND" = cuda ]; then
		cp "$H/spec.yaml" "$1/spec.yaml"
		cp "$H/launch.json" "$1/"
		if command -v nvcc >/dev/null; then
			nvcc -arch=sm_90 -cubin -O3 -o "$1/sgemm.cubin" "$H/../cuda-sgemm/sgemm.cu"
		else
			cp "$B/cuda/sgemm.cubin" "$1/"
		fi
	else
		cp "$H/host.yaml" "$1/spec.yaml"
		cp "$H/tiles.json" "$H/../cpu-gemm/gemm.c" "$1/"
		mkdir -p "$1/runner/device" && cp "$H/../../runner/device/dev_host_kernel.h" "$1/runner/device/"
		sed -i 's|#include "../../runner/device/dev_host_kernel.h"|#include "runner/device/dev_host_kernel.h"|' "$1/gemm.c"
	fi
}
decisions() {
	"$B/ratchet" --db "$1" log --json | python3 -c 'import json,sys
print(" ".join(i["variant"] + ":" + i["state"] for i in json.load(sys.stdin)["iterations"] if i["state"] != "interrupted"))'
}
setup "$O/par"
setup "$O/ser"
first=$(sed -n 's/^devices: \[\([^,]*\),.*/\1/p' "$O/par/spec.yaml")
t0=$(date +%s.%N)
(cd "$O/par" && "$B/ratchet" --db c.db run spec.yaml) > "$O/par.out" 2>&1 || { cat "$O/par.out"; exit 1; }
t1=$(date +%s.%N)
(cd "$O/ser" && "$B/ratchet" --db c.db run --devices "$first" spec.yaml) > "$O/ser.out" 2>&1 || { cat "$O/ser.out"; exit 1; }
t2=$(date +%s.%N)
tail -4 "$O/par.out"
a=$(decisions "$O/par/c.db") b=$(decisions "$O/ser/c.db")
echo "parallel ($(sed -n 's/^devices: //p' "$O/par/spec.yaml")): $(awk "BEGIN { print $t1 - $t0 }") s: $a"
echo "serial ($first): $(awk "BEGIN { print $t2 - $t1 }") s: $b"
[ "$a" = "$b" ] && echo "same decisions" || echo "DIFFERENT decisions"
