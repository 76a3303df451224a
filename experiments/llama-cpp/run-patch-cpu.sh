#!/bin/sh
# The ggml-cpu patch (patches/mul-mat-chunk-64.diff) measured by ratchet on
# this machine's CPU, alone: run.sh's campaign with the patch as its only
# variant and the CPU time of llama-bench's prompt processing (cpu.pp_cpu_s,
# below) as the objective, since the patch changes the work chunks of matrix
# products whose two sides both have more than one row (prompt batches), not
# those of one-token decoding (nr1 == 1 already took 64-row chunks). A 4-layer,
# 512-wide model makes the products the bulk of the time. The cached source
# tree is shared, so the campaign holds its patch.lock like the real-engine
# test. Writes WORK/{campaign.yaml,run.out,show.txt,report.md,log.txt};
# results-cpu/ holds this machine's.
#   experiments/llama-cpp/run-patch-cpu.sh WORK
# Environment: as run.sh (RATCHET, LLAMA_BIN, GSM8K, THREADS).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${1:?usage: run-patch-cpu.sh WORK}
mkdir -p "$work" && work=$(cd "$work" && pwd)
bin=${LLAMA_BIN:-$(sh "$root/tools/llama.sh" | tail -1)}
ratchet=${RATCHET:-$root/build/ratchet}
src=$(cd "$bin/../../src" && pwd)
[ -f "$bin/../CMakeCache.txt" ] || { echo "run-patch-cpu.sh: $bin has no build tree to rebuild" >&2; exit 1; }
SPEC_ONLY=1 LLAMA_BIN="$bin" MODEL_ARGS="--embd 512 --layers 4 --ff 1536 --heads 8 --ctx 4096" \
	sh "$here/run.sh" "$work" > "$work/model.out" 2>&1
y=$work/campaign.yaml
# The objective is the CPU time (user + system) llama-bench takes for its
# prompt tests, not their tokens per second: on this 2-core host shared with
# other jobs (load average 9 to 12) a first run with bench.pp_tps as the
# objective swung from 285 to 1,891 tokens/s between samples of the same
# build, CI [-41%, +33%]. With -t 1 the time the one thread computes moves far
# less with the host's load than the time it waits for a core.
sed -i -e 's/^name: .*/name: llama-cpp-cpu-patch/' \
	-e 's/^objective: .*/objective: {metric: cpu.pp_cpu_s, goal: min, min_gain: 3%}/' \
	-e 's/-p, "16", -n, "8", -r, "1"/-p, "256", -n, "0", -r, "3"/' \
	-e 's/^repeats: .*/repeats: {min: 5, max: 8, confidence: 0.95, interleave: true}/' \
	-e '/^  - name: slots-8$/,/^    flag: /d' -e '/^  - name: batch-1024$/,/^    flag: /d' "$y"
BIN=$bin MODEL=$work/random-llama-q8_0.gguf python3 - "$y" <<'P'
import os, sys
p = sys.argv[1]
s = open(p).read()
cpu = """  # llama-bench's prompt tests (512 tokens, 5 runs, 1 thread), timed in CPU
  # seconds of the process (resource.getrusage of the child), model load included.
  - name: cpu
    command: [python3, -c, 'import json, resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); r = resource.getrusage(resource.RUSAGE_CHILDREN); print(json.dumps({"cpu_s": r.ru_utime + r.ru_stime}))',
              "%s/llama-bench", -m, "%s", -p, "512", -n, "0", -r, "5", -t, "1"]
    metrics: {pp_cpu_s: {pointer: /cpu_s, unit: s, better: lower}}
    timeout: 5m
""" % (os.environ["BIN"], os.environ["MODEL"])
s = s.replace("benchmarks:\n", "benchmarks:\n" + cpu, 1)
open(p, "w").write(s)
P
grep -q "name: mul-mat-chunk-64" "$y" && ! grep -q "name: slots-8\|name: batch-1024" "$y" &&
	grep -q "name: cpu" "$y" && grep -q -- '-p, "256"' "$y" || { echo "run-patch-cpu.sh: the spec edit failed" >&2; exit 1; }
exec 9>"$src/../patch.lock"
flock 9
[ -z "$(git -C "$src" status --porcelain --untracked-files=no)" ] || { echo "$src has local changes" >&2; exit 1; }
cd "$work"
date -u +"started %Y-%m-%dT%H:%M:%SZ" > log.txt
uptime >> log.txt
nproc >> log.txt
"$ratchet" --db ratchet.db run --quiet campaign.yaml > run.out 2>&1 || echo "ratchet run exited $?" >> log.txt
date -u +"finished %Y-%m-%dT%H:%M:%SZ" >> log.txt
uptime >> log.txt
"$ratchet" --db ratchet.db log >> log.txt 2>&1
for it in 1:0 1:1; do "$ratchet" --db ratchet.db show "$it"; done > show.txt 2>&1 || true
"$ratchet" --db ratchet.db report -o report.md > /dev/null 2>&1 || true
git -C "$src" status --porcelain --untracked-files=no >> log.txt
