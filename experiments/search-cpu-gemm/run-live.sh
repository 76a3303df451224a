#!/bin/sh
# The live campaign of this space: campaign.yaml run by `ratchet run` on a
# copy of this folder with cpu-gemm's kernel (gemm.c) beside the table.
#   usage: [MAX=N] sh run-live.sh BUILD_DIR [WORK_DIR]   (prints the kept table;
#   MAX caps the iterations)
set -eu
B=$(cd "${1:?usage: run-live.sh BUILD_DIR [WORK_DIR]}" && pwd)
H=$(cd "$(dirname "$0")" && pwd)
W=${2:-$(mktemp -d /tmp/ratchet-search-cpu-gemm-XXXXXX)}
mkdir -p "$W"
cp "$H/campaign.yaml" "$H/tiles.json" "$H/../cpu-gemm/gemm.c" "$W/"
mkdir -p "$W/runner/device" && cp "$H/../../runner/device/dev_host_kernel.h" "$W/runner/device/"
sed -i 's|#include "../../runner/device/dev_host_kernel.h"|#include "runner/device/dev_host_kernel.h"|' "$W/gemm.c"
cd "$W"
"$B/ratchet" --db "$W/c.db" run ${MAX:+--max-iterations $MAX} campaign.yaml || true
cat tiles.json
