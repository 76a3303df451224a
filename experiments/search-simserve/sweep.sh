#!/bin/sh
# The exhaustive sweep of the simserve tile space (campaign.yaml's space:
# BLOCK_M, BLOCK_N, num_warps of the decode.BS_GT_32 entry, under the
# restriction BLOCK_M * BLOCK_N <= 65536): every valid point, simserve
# started on a table with that entry (every other class at its best tile)
# and measured SAMPLES times by `ratchet bench load` (48 in flight, 96
# requests of 64 prompt and 16 output tokens, seeds 1..SAMPLES).
# Writes the sweep file format of docs/search.md to stdout.
#   usage: sh sweep.sh BUILD_DIR > sweep.jsonl
set -eu
B=${1:?usage: sweep.sh BUILD_DIR}
SAMPLES=${SAMPLES:-3}
T=$(mktemp -d /tmp/ratchet-simserve-sweep-XXXXXX)
trap 'rm -rf "$T"' EXIT
MS="4 8 16 32 64 128 256 512"
NS="8 16 32 64 128 256 512 1024"
WS="1 2 4 8 16 32"
echo '{"sweep":1,"name":"simserve decode.BS_GT_32 (48 in flight)","metric":"output_throughput","goal":"max",'\
'"parameters":[{"name":"BLOCK_M","values":[4,8,16,32,64,128,256,512]},{"name":"BLOCK_N","values":[8,16,32,64,128,256,512,1024]},'\
'{"name":"num_warps","values":[1,2,4,8,16,32]}],"restrictions":["BLOCK_M * BLOCK_N <= 65536"]}'
for m in $MS; do for n in $NS; do for w in $WS; do
	[ $((m * n)) -le 65536 ] || continue
	cat > "$T/tiles.json" <<EOT
{"decode.BS_LE_8": {"BLOCK_M": 16, "BLOCK_N": 64, "num_warps": 4},
 "decode.BS_LE_32": {"BLOCK_M": 32, "BLOCK_N": 64, "num_warps": 4},
 "decode.BS_GT_32": {"BLOCK_M": $m, "BLOCK_N": $n, "num_warps": $w},
 "prefill.T_LE_512": {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4},
 "prefill.T_GT_512": {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8}}
EOT
	"$B/simserve" --port 0 --tiles "$T/tiles.json" --decode-us-per-step 100 --decode-us-per-seq 200 \
		--max-graph-bs 64 > "$T/ss.out" 2>&1 &
	pid=$!
	port=""
	for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		port=$(grep -o '127.0.0.1:[0-9]*' "$T/ss.out" | cut -d: -f2 || true)
		[ -n "$port" ] && break
		sleep 0.1
	done
	s=""
	for seed in $(seq 1 "$SAMPLES"); do
		v=$("$B/ratchet" --db "$T/b.db" bench load -e "http://127.0.0.1:$port" -c 48 -n 96 --prompt-tokens 64 \
			--output-tokens 16 --ignore-eos --no-store --seed "$seed" 2>/dev/null |
			awk '/Output token throughput/ {print $NF}')
		s="$s${s:+,}${v:-null}"
	done
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	echo "{\"point\":{\"BLOCK_M\":$m,\"BLOCK_N\":$n,\"num_warps\":$w},\"samples\":[$s]}"
done; done; done
