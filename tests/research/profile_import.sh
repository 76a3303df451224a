#!/bin/sh
# `ratchet profile import` on each profiler's fixture (tests/agents/fixtures,
# each naming its source): the format is detected, and the stored per-op
# shares, calls per step and per-shape rows are the ones checked by hand in
# the fixtures' comments. Errors are usage errors (exit 2) naming the file;
# importing the same bytes into one campaign twice is one.
set -eu
: "${RATCHET_BIN:?}" "${RATCHET_SRC:?}"
command -v sqlite3 >/dev/null || { echo "sqlite3 CLI missing (make deps installs it)"; exit 1; }
. "${RATCHET_SRC:?}/tests/lib/common.sh"
scratch_dir ratchet-profile
F="$RATCHET_SRC/tests/agents/fixtures"
R() { "$RATCHET_BIN" --db p.db "$@"; }
ops() { sqlite3 p.db "SELECT group_concat(op || '=' || printf('%.1f', 100 * share), ' ') FROM (SELECT op, share FROM profile_ops WHERE profile_id = $1 AND calls > 0 ORDER BY share DESC, op)"; }

sqlite3 nsys.sqlite < "$F/nsys_llamacpp_decode.sql"
R profile import "$F/kineto_vllm_decode.json" > k.out || { cat k.out; no "import kineto"; }
R profile import nsys.sqlite > n.out || { cat n.out; no "import nsys"; }
R profile import "$F/rocprofv3_aiter_kernel_trace.csv" --steps 2 > r.out || { cat r.out; no "import rocprof"; }
R profile import "$F/unitrace_xpu_device_timing.txt" > u.out || { cat u.out; no "import unitrace"; }
[ "$(sqlite3 p.db "SELECT group_concat(format, ' ') FROM profiles ORDER BY id")" = "chrome nsys rocprof unitrace" ] &&
	ok "formats detected" || no "formats: $(sqlite3 p.db "SELECT group_concat(format, ' ') FROM profiles")"
want() { got=$(ops "$1"); [ "$got" = "$2" ] && ok "$3: $got" || no "$3: got $got, want $2"; }
want 1 "gemm=50.0 attention=32.0 activation=10.0 norm=5.0 communication=3.0" "Kineto shares"
want 2 "gemm=79.0 attention=10.0 norm=5.0 quantize=4.0 other=2.0" "nsys shares"
want 3 "attention=40.0 gemm=40.0 activation=10.0 norm=5.0 quantize=5.0" "rocprofv3 shares"
want 4 "gemm=60.0 attention=25.0 activation=8.0 norm=5.0 other=2.0" "unitrace shares"
cps=$(sqlite3 p.db "SELECT printf('%.1f', calls_per_step) FROM profile_ops WHERE profile_id = 1 AND op = 'attention'")
[ "$cps" = 2.0 ] && ok "calls per step from ProfilerStep annotations ($cps)" || no "calls per step $cps"
st=$(sqlite3 p.db "SELECT steps || ':' || steps_from FROM profiles WHERE id = 3")
[ "$st" = 2:option ] && ok "--steps gives the steps ($st)" || no "steps $st"
sh=$(sqlite3 p.db "SELECT shape || '=' || calls FROM profile_kernels WHERE profile_id = 4 AND shape IS NOT NULL")
[ "$sh" = "SIMD32 {16;8;1} {256;1;1}=20" ] && ok "per-shape row from unitrace -v ($sh)" || no "shape: $sh"
grep -q 'attention .* 32.0%' k.out && grep -q 'flash_fwd_splitkv_kernel' k.out && ok "printed" || { cat k.out; no "print"; }
R --json profile import "$F/kineto_vllm_decode.json" > j.out && grep -q '"calls_per_step": 2' j.out &&
	ok "--json" || { cat j.out; no "--json"; }

rc=0; R profile import "$F/nsys_llamacpp_decode.sql" > e.out 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q 'not a profile this ratchet reads' e.out && ok "an unknown file is a usage error" ||
	{ cat e.out; no "unknown file exit $rc"; }
rc=0; R profile import "$F/kineto_vllm_decode.json" --format rocprof > e.out 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q 'kineto_vllm_decode.json:1: not a rocprofv3 kernel trace' e.out &&
	ok "the wrong --format names the file and line" || { cat e.out; no "wrong format exit $rc"; }
printf '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "dur": 3}]}' > cpu.json
rc=0; R profile import cpu.json > e.out 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q 'no GPU kernel' e.out && ok "a trace without kernels is refused" || { cat e.out; no "no kernels exit $rc"; }
n=$(sqlite3 p.db "SELECT count(*) FROM profiles")
[ "$n" = 5 ] && ok "failed imports store nothing" || no "profiles: $n"
rc=0; R observe --campaign 9 cpu.json > e.out 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q 'no campaign 9' e.out && ok "observe names a missing campaign" || { cat e.out; no "observe exit $rc"; }
# a spec's profile: map replaces the default pattern for its op
cat > spec.yaml <<'Y'
name: prof
benchmarks:
  - name: b
    command: [true]
    metrics: {x: {regex: "x=([0-9.]+)", better: higher}}
objective: {metric: b.x, goal: max}
profile:
  ops: {gemm: "^sm90_xmma_gemm|^nothing", attention: "^void flash::"}
  step: "^ProfilerStep#"
Y
"$RATCHET_BIN" check spec.yaml > check.out 2>&1 && grep -q "attention: '^void flash::'" check.out &&
	ok "check prints the profile: map" || { cat check.out; no "check profile"; }
R profile import "$F/kineto_vllm_decode.json" --spec spec.yaml > s.out ||  { cat s.out; no "import --spec"; }
id=$(sqlite3 p.db "SELECT max(id) FROM profiles")
want "$id" "gemm=50.0 attention=30.0 activation=10.0 norm=5.0 communication=3.0 other=2.0" "the spec's map (reshape_and_cache is other now)"
printf 'name: bad\nbenchmarks: [{name: b, command: [true], metrics: {x: {regex: "x", better: higher}}}]\nobjective: {metric: b.x}\nprofile:\n  ops: {attn: "x", norm: "rms("}\n' > bad.yaml
rc=0; "$RATCHET_BIN" check bad.yaml > bad.out 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q "bad.yaml:5:9: profile.ops: unknown op 'attn'" bad.out && grep -q 'profile.ops.norm' bad.out &&
	ok "a bad op and a bad regex are named with file:line:col" || { cat bad.out; no "bad spec exit $rc"; }
# steps that ran without a graph (simserve's annotations) are a finding
cat > eager.json <<'J'
{"traceEvents": [
 {"ph": "X", "cat": "kernel", "name": "sim::decode_gemm", "ts": 0, "dur": 600},
 {"ph": "X", "cat": "user_annotation", "name": "simserve_step", "ts": 0, "dur": 600, "args": {"batch": 16, "graphed": false}},
 {"ph": "X", "cat": "kernel", "name": "sim::decode_gemm", "ts": 600, "dur": 400},
 {"ph": "X", "cat": "user_annotation", "name": "simserve_step", "ts": 600, "dur": 400, "args": {"batch": 8, "graphed": true}}
]}
J
R profile import eager.json > eager.out || { cat eager.out; no "import eager"; }
R findings --top 0 > f.out
grep -q 'ungraphed .*batch sizes up to 16 run without a CUDA graph' f.out &&
	grep -q '1 steps ran without a graph, batch up to 16, 600 us (60.0% of the time); the largest graphed batch seen: 8' f.out &&
	ok "ungraphed batch sizes found" || { cat f.out; no "ungraphed"; }
grep -Eq '^  [0-9]+ +[0-9]+ +13\.8%  60\.0% x 1\.3 +ungraphed' f.out && ok "its bound: 60% x (1 - 1/1.3) = 13.8%" || no "ungraphed bound"
eid=$(sqlite3 p.db "SELECT max(id) FROM profiles")
R findings --profile "$eid" --top 0 > fp.out
grep -q ungraphed fp.out && ! grep -q 'communication' fp.out && [ "$(grep -c '^  [0-9]' fp.out)" = 2 ] &&
	ok "findings --profile lists that profile's findings only" || { cat fp.out; no "findings --profile"; }
# one profile from several files (ranks): summed, calls per step per file
R profile import "$F/kineto_vllm_decode.json" "$F/kineto_vllm_decode.json" > two.out || { cat two.out; no "two files"; }
tid=$(sqlite3 p.db "SELECT max(id) FROM profiles")
got=$(sqlite3 p.db "SELECT printf('%.0f', total_us) || ':' || steps FROM profiles WHERE id = $tid")
cps=$(sqlite3 p.db "SELECT printf('%.1f', calls_per_step) FROM profile_ops WHERE profile_id = $tid AND op = 'attention'")
[ "$got" = 4000:4 ] && [ "$cps" = 2.0 ] && ok "two files make one profile ($got, $cps attention calls per step)" ||
	no "two files: $got $cps"
want "$tid" "gemm=50.0 attention=32.0 activation=10.0 norm=5.0 communication=3.0" "their shares"
rc=0; R profile import "$F/kineto_vllm_decode.json" "$F/unitrace_xpu_device_timing.txt" > mix.out 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q 'is a unitrace profile' mix.out && ok "files of two formats are refused" ||
	{ cat mix.out; no "mixed exit $rc"; }
# migration 7 on an old database: profiles arrive, and its iterations take the observed state
sqlite3 old.db < "$RATCHET_SRC/tests/db/fixtures/schema_v1.sql"
sqlite3 old.db "PRAGMA user_version = 1; INSERT INTO campaigns (id, name, spec_path, spec_text, spec_sha256, workdir, seed, state, created_at) VALUES (1, 'g', '/s.yaml', 'name: g', 'x', '/w', 1, 'finished', 1000)"
"$RATCHET_BIN" --db old.db profile import "$F/kineto_vllm_decode.json" > old.out 2>&1 || { cat old.out; no "import into a migrated database"; }
sqlite3 old.db "INSERT INTO iterations (campaign_id, seq, variant, kind, state, started_at) VALUES (1, 1, 'observe', 'observe', 'observed', 1)" &&
	[ "$(sqlite3 old.db "PRAGMA integrity_check")" = ok ] && ok "a migrated database takes profiles and the observed state" ||
	no "migration 7"
# real traces (tests/agents/fixtures/h200, PyTorch 2.11 on an H200): the
# wall time from the ProfilerStep spans, the GPU idle in it, and the CUDA-graph
# finding from timing alone: graphs off gives it, graphs on does not
H="$F/h200"
R profile import "$H/decode_b4_eager.json" > de.out || { cat de.out; no "import decode_b4_eager"; }
eid=$(sqlite3 p.db "SELECT max(id) FROM profiles")
R profile import "$H/decode_b4_graph.json" > dg.out || { cat dg.out; no "import decode_b4_graph"; }
gid=$(sqlite3 p.db "SELECT max(id) FROM profiles")
w=$(sqlite3 p.db "SELECT printf('%.3f', wall_us) || ':' || wall_from || ':' || host_launches || ':' || graph_launches || ':' || short_kernels FROM profiles WHERE id = $eid")
[ "$w" = "7274.229:steps:222:0:216" ] && ok "graphs off: wall time of 3 steps, 222 launches one at a time, 216 short ($w)" || no "graphs off: $w"
w=$(sqlite3 p.db "SELECT printf('%.3f', wall_us) || ':' || host_launches || ':' || graph_launches FROM profiles WHERE id = $gid")
[ "$w" = "1191.946:0:3" ] && ok "graphs on: 3 graph launches ($w)" || no "graphs on: $w"
grep -q 'wall time 7274 us (steps): the GPU idle 90.1% of it' de.out && ok "import prints the idle share" || { cat de.out; no "idle printed"; }
ws=$(sqlite3 p.db "SELECT printf('%.2f', 100 * wall_share) FROM profile_ops WHERE profile_id = $eid AND op = 'gemm'")
[ "$ws" = "4.46" ] && ok "gemm is 45.3% of kernel time, $ws% of wall time" || no "gemm wall share $ws"
R findings --profile "$eid" --top 0 > fe.out
R findings --profile "$gid" --top 0 > fg.out
grep -q 'ungraphed .*222 of 222 kernels launched one at a time from the CPU, the GPU idle 90.1% of the wall time' fe.out &&
	ok "graphs off: the CUDA-graph finding" || { cat fe.out; no "ungraphed from timing"; }
grep -q 'gpu_idle .*GPU idle 90.1% of the steps (wall time), 216 kernels under 10 us' fe.out &&
	ok "graphs off: GPU idle finding" || { cat fe.out; no "gpu_idle graphs off"; }
! grep -q ungraphed fg.out && grep -q 'GPU idle 37.7% of the steps (wall time)' fg.out &&
	ok "graphs on: no CUDA-graph finding; the host's sync still leaves the GPU idle 37.7%" || { cat fg.out; no "graphs on findings"; }
grep -q 'hot_op .*gemm at 45.3% of kernel time, 4.5% of wall time' fe.out && ok "hot_op names both shares" || { cat fe.out; no "hot_op shares"; }
R profile import "$H/prefill_b64_eager.json" > pe.out || { cat pe.out; no "import prefill_b64_eager"; }
pid=$(sqlite3 p.db "SELECT max(id) FROM profiles")
R findings --profile "$pid" --top 0 > fpe.out
! grep -Eq 'ungraphed|gpu_idle' fpe.out && ok "prefill at batch 64 is GPU-bound: neither finding" || { cat fpe.out; no "prefill b64"; }
# Nsight Compute CSV, detected
R profile import "$H/ncu_details.csv" > nc.out || { cat nc.out; no "import ncu"; }
nid=$(sqlite3 p.db "SELECT max(id) FROM profiles")
[ "$(sqlite3 p.db "SELECT format || ':' || launches || ':' || printf('%.2f', total_us) || ':' || ifnull(wall_us, 'null') FROM profiles WHERE id = $nid")" = "ncu:7:701.53:null" ] &&
	ok "an ncu --csv export imports (7 kernels, 701.53 us, no wall time)" || no "ncu row"
want "$nid" "gemm=74.3 attention=16.1 norm=6.9 activation=2.6" "ncu shares"
# kernel names to table keys (profile.keys): the real cuBLASLt kernels map to
# M,N,K of the aten::mm that launched them, and the table's hole is found
S="$RATCHET_SRC/experiments/profiles-h200/spec.yaml"
R profile import "$H/decode_b64_eager.json" --spec "$S" > keys.out || { cat keys.out; no "import with keys"; }
kid=$(sqlite3 p.db "SELECT max(id) FROM profiles")
sh=$(sqlite3 p.db "SELECT group_concat(shape, ' ') FROM (SELECT DISTINCT shape FROM profile_kernels WHERE profile_id = $kid AND shape IS NOT NULL ORDER BY shape)")
[ "$sh" = "64,1024,1024 64,1024,2816 64,3072,1024 64,32000,1024 64,5632,1024" ] &&
	ok "the GEMM kernels carry their table keys ($sh)" || no "keys: $sh"
[ "$(sqlite3 p.db "SELECT count(*) FROM profile_kernels WHERE profile_id = $kid AND name LIKE 'void cublasLt::splitKreduce%' AND shape = '64,1024,2816'")" = 1 ] &&
	ok "cuBLASLt's split-K reduction maps to its GEMM's key" || no "splitK key"
R findings --profile "$kid" --top 0 > fk.out
grep -q 'hole .*gemm_tiles.csv has no entry for 64,5632,1024' fk.out && ! grep -q 'no entry for 64,3072,1024' fk.out &&
	ok "a mapped table hole from a real trace: the gate/up GEMM (64,5632,1024)" || { cat fk.out; no "mapped hole"; }
rc=0; R holes "$RATCHET_SRC/experiments/profiles-h200/gemm_tiles.csv" --profile "$H/decode_b64_eager.json" --spec "$S" -k M,N,K > holes.out 2>&1 || rc=$?
[ $rc -eq 1 ] && grep -q 'the profile saw 5 shapes, 4 covered' holes.out && grep -Eq '21\.4% +71\.552 +64,5632,1024' holes.out &&
	ok "ratchet holes --spec reads the real trace: 64,5632,1024 is the hole, 21.4% of the GEMM time" || { cat holes.out; no "holes --spec exit $rc"; }
printf 'name: k\nbenchmarks: [{name: b, command: [true], metrics: {x: {regex: "x"}}}]\nobjective: {metric: b.x}\nprofile:\n  keys:\n    - {match: "^nvjet (?<M>[0-9]+)", key: "{M},{N}"}\n' > badk.yaml
rc=0; "$RATCHET_BIN" check badk.yaml > badk.out 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q "profile.keys\[0\].key: 'N' is no named group of match" badk.out &&
	ok "a key naming no group of its regex is refused" || { cat badk.out; no "bad key exit $rc"; }


# the same bytes into one campaign twice are refused by their sha256, not
# stored twice with their findings (issue 23); other bytes of the trace import
cat > mini.yaml <<'Y'
name: mini
benchmarks:
  - name: b
    command: [sh, -c, 'echo "{\"x\": 1}"']
    metrics: {x: {pointer: /x, better: higher}}
objective: {metric: b.x, goal: max}
repeats: {min: 2, max: 2}
variants:
  - {name: v1, env: {A: "1"}}
strategy: list
Y
R run --quiet mini.yaml > mini.out 2>&1 || { cat mini.out; no "a campaign to import into"; }
cid=$(sqlite3 p.db "SELECT max(id) FROM campaigns")
R profile import --campaign "$cid" "$F/kineto_vllm_decode.json" > c1.out 2>&1 || { cat c1.out; no "import into the campaign"; }
pid=$(sqlite3 p.db "SELECT max(id) FROM profiles")
nf=$(sqlite3 p.db "SELECT count(*) FROM findings")
rc=0; R profile import --campaign "$cid" "$F/kineto_vllm_decode.json" > d.out 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q "already imported as profile $pid (the same sha256" d.out &&
	[ "$(sqlite3 p.db "SELECT count(*) FROM findings")" = "$nf" ] &&
	ok "the same profile twice into one campaign is refused, no finding added" ||
	{ cat d.out; no "a duplicate import (exit $rc)"; }
{ cat "$F/kineto_vllm_decode.json"; echo; } > k2.json
R profile import --campaign "$cid" k2.json > c2.out 2>&1 && ok "other bytes import" || { cat c2.out; no "k2.json"; }

# observe reads the campaign's tables from its workdir, wherever it is run
# (issue 23: `observe --campaign 1` from another folder failed on tiles.json)
mkdir sub && echo '{"A": {"v": 1}}' > sub/table.json
sed -e 's/^name: mini/name: sub/' -e 's/  - {name: v1, env: {A: "1"}}/  - {name: t, table: {file: table.json, set: {A: {v: 2}}}}/' \
	mini.yaml > sub/spec.yaml
R run --quiet sub/spec.yaml > sub.out 2>&1 || { cat sub.out; no "the sub campaign"; }
sid=$(sqlite3 p.db "SELECT max(id) FROM campaigns")
mkdir elsewhere
(cd elsewhere && "$RATCHET_BIN" --db ../p.db observe --campaign "$sid" "$F/kineto_vllm_decode.json") > obs.out 2>&1 &&
	ok "observe from another folder finds the campaign's table" || { cat obs.out; no "observe from another folder"; }
finish
