#!/bin/sh
# make demo: a real campaign on the CPU example, into ./ratchet.db.
set -eu
B=${1:-build}
echo "placeholder demo: campaign loop not built yet"
"$B/ratchet" --help
