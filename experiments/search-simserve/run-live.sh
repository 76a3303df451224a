#!/bin/sh
# The live campaign of this space: campaign.yaml run by `ratchet run` on a
# copy of this folder, with the build's simserve on PATH.
#   usage: sh run-live.sh BUILD_DIR [WORK_DIR]   (prints the kept table)
set -eu
B=$(cd "${1:?usage: run-live.sh BUILD_DIR [WORK_DIR]}" && pwd)
H=$(cd "$(dirname "$0")" && pwd)
W=${2:-$(mktemp -d /tmp/ratchet-search-simserve-XXXXXX)}
mkdir -p "$W"
cp "$H/campaign.yaml" "$H/tiles.json" "$W/"
cd "$W"
PATH="$B:$PATH" "$B/ratchet" --db "$W/c.db" run campaign.yaml || true
cat tiles.json
