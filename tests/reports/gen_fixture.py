#!/usr/bin/env python3
"""Writes tests/fixtures/report_campaign.sql: one realistic overnight campaign
for the report tests (baseline + 10 iterations: kept, reverted, gated with
flips, failed, invalidated, interrupted, a correction linking two iterations,
regressions including one on a kept change, env facts, log events, artifacts
and per-request latencies of the baseline and the final configuration).

The output is committed; rerun this only to change the fixture, then
regenerate the golden files (RATCHET_REGEN=1 ctest -R rep_golden)."""
import random
import sys

rng = random.Random(7)
T0 = 1764460800000  # 2025-11-30T00:00:00Z
out = []


def q(s):
    if s is None:
        return "NULL"
    if isinstance(s, (int, float)):
        return repr(s)
    return "'" + str(s).replace("'", "''") + "'"


def row(table, **kw):
    cols = ", ".join(kw)
    vals = ", ".join(q(v) for v in kw.values())
    out.append(f"INSERT INTO {table} ({cols}) VALUES ({vals});")


SPEC = ("name: simserve-overnight\nobjective: {metric: serve.tok_s, goal: max, min_gain: 2%}\n"
        "constraints: [serve.ttft_p95 <= 1s, serve.e2el_p50 <= 3s]\n")
row("campaigns", id=1, name="simserve-overnight", spec_path="experiments/simserve.yaml",
    spec_text=SPEC, spec_sha256="5" * 64, workdir="/tmp/ratchet-work", seed=1,
    state="finished", best_iteration=9, created_at=T0, finished_at=T0 + 11 * 1200000)

for k, v in [("host", "bench-01"), ("kernel", "6.1.0-26-amd64"), ("cpu", "AMD EPYC 9454 48-Core"),
             ("device.name", "AMD Instinct MI300X"), ("device.uuid", "GPU-7f3c9a"),
             ("driver", "6.8.5"), ("engine.version", "vllm 0.11.1")]:
    row("env_facts", campaign_id=1, iteration_id=None, key=k, value=v, created_at=T0)

TEST = "bootstrap ratio of medians + Mann-Whitney U"
# seq, variant, kind, change, state, phase, decision, reason, base tok/s, cand tok/s,
# delta, lo, hi, p, gate run id, parent seq
its = [
    (0, "baseline", "baseline", "", "baseline", "decide", None, "baseline of the campaign",
     1000.0, 1000.0, None, None, None, None, 1, None),
    (1, "graphs-256", "flag",
     "engine.command += --compilation-config '{\"cudagraph_capture_sizes\":[1,2,4,8,16,32,64,128,256]}'",
     "kept", "decide", "keep", "+6.1% > min_gain 2%, gate passed",
     1000.0, 1061.0, 0.061, 0.040, 0.083, 0.0012, 2, 0),
    (2, "asm-gemm", "env", "env VLLM_ROCM_USE_AITER_FP4_ASM_GEMM: (unset) -> 1",
     "gated", "gate", "revert", "gsm8k 94.1% < 96.5% (12 flips to wrong)",
     1061.0, 1139.0, 0.074, 0.051, 0.097, 0.0008, 3, 1),
    (3, "attn-d512-tile", "table",
     "configs/attn.json: D_GEQ_512.Q_GEQ_256.BLOCK_M: 64 -> 128",
     "reverted", "decide", "revert", "+0.4% [-1.2, +2.0] does not clear min_gain 2%",
     1061.0, 1065.2, 0.004, -0.012, 0.020, 0.61, None, 1),
    (4, "prefill-chunk-8k", "flag", "engine.command += --max-num-batched-tokens 8192",
     "kept", "decide", "keep", "+3.2% > min_gain 2%; ttft_p95 +9% recorded as a regression",
     1061.0, 1095.0, 0.032, 0.021, 0.044, 0.004, 4, 1),
    (5, "scalem-runtime-arg", "patch",
     "patch patches/scalem.diff in /src/aiter\n--- a/csrc/scale.cu\n+++ b/csrc/scale.cu\n@@ -40,7 +40,7 @@\n-  constexpr int M = 16;\n+  int M = args.scale_m;",
     "failed", "build", "revert", "build failed: pip install -e /src/aiter exited 1",
     1095.0, None, None, None, None, None, None, 4),
    (6, "max-num-seqs-512", "flag", "engine.command += --max-num-seqs 512",
     "kept", "decide", "keep", "+9.4% > min_gain 2%, gate passed",
     1095.0, 1198.0, 0.094, 0.071, 0.118, 0.0003, 5, 4),
    (7, "max-num-seqs-512-rerun", "flag", "engine.command += --max-num-seqs 512",
     "reverted", "decide", "revert", "+0.9% [-0.8, +2.5] does not clear min_gain 2%",
     1095.0, 1104.9, 0.009, -0.008, 0.025, 0.38, None, 4),
    (8, "attn-d512-tile-key", "table",
     "configs/attn.json: D_GEQ_512.Q_GE_256.BLOCK_M: 64 -> 128 (key as the kernel looks it up)",
     "kept", "decide", "keep", "+4.8% > min_gain 2%, gate passed",
     1095.0, 1147.6, 0.048, 0.033, 0.064, 0.0021, 6, 4),
    (9, "kv-cache-fp8", "flag", "engine.command += --kv-cache-dtype fp8",
     "interrupted", "bench", None, "interrupted by SIGINT during bench (rep 2 of 5)",
     1147.6, None, None, None, None, None, None, 8),
    (10, "sched-delay-2ms", "flag", "engine.command += --scheduler-delay-factor 0.002",
     "reverted", "decide", "revert", "-1.5% [-3.1, +0.2]: no gain; e2el_p50 +6% regression",
     1147.6, 1130.4, -0.015, -0.031, 0.002, 0.09, None, 8),
]

gates = {  # run id: (iteration seq, accuracy, passed, flips_to_wrong, flips_to_right)
    1: (0, 0.9720, 1, 0, 0), 2: (1, 0.9727, 1, 1, 2), 3: (2, 0.9409, 0, 12, 3),
    4: (4, 0.9712, 1, 2, 1), 5: (6, 0.9735, 1, 0, 0), 6: (8, 0.9742, 1, 1, 3),
}

seq_to_id = {}
for it in its:
    seq_to_id[it[0]] = it[0] + 1

# gate runs first (iterations reference them)
for rid, (seq, acc, passed, ftw, ftr) in gates.items():
    n = 1319
    corr = round(acc * n)
    row("gate_runs", id=rid, iteration_id=seq_to_id[seq], label="simserve", endpoint="http://127.0.0.1:41873",
        model="simserve-7b", api="chat", format="gsm8k_cot", extract="flexible",
        dataset_sha256="d" * 64, n_planned=n, n_done=n, n_correct=corr, n_correct_strict=corr - 9,
        n_correct_flex=corr, n_failed=0, accuracy=acc, wilson_lo=round(acc - 0.009, 4),
        wilson_hi=round(acc + 0.008, 4), baseline_run_id=None if rid == 1 else 1,
        diff=None if rid == 1 else round(acc - 0.9720, 4),
        diff_lo=None if rid == 1 else round(acc - 0.9720 - 0.006, 4),
        diff_hi=None if rid == 1 else round(acc - 0.9720 + 0.006, 4),
        mcnemar_p=None if rid == 1 else (0.012 if rid == 3 else 0.71),
        identical_rate=None if rid == 1 else (0.91 if rid == 3 else 0.985),
        flips_to_wrong=None if rid == 1 else ftw, flips_to_right=None if rid == 1 else ftr,
        early_stop=0, passed=passed,
        verdict=("pass: " if passed else "fail: ") + f"accuracy {acc * 100:.2f}% vs min 96.50%",
        params_json='{"min_accuracy": 0.965, "max_drop": 0.01}',
        started_at=T0 + seq * 1200000 + 900000, finished_at=T0 + seq * 1200000 + 1100000)

for (seq, var, kind, change, state, phase, dec, reason, ob, oc, d, lo, hi, p, gid, pseq) in its:
    iid = seq_to_id[seq]
    fin = None if state == "interrupted" else T0 + seq * 1200000 + 1150000
    nc = None if oc is None else 5
    row("iterations", id=iid, campaign_id=1, seq=seq, parent_id=None if pseq is None else seq_to_id[pseq],
        variant=var, kind=kind, change_text=change, change_sha256=None if seq == 0 else f"{seq:02d}" * 32,
        config_sha256=f"{seq + 10:02d}" * 32, state=state, phase=phase, decision=dec, reason=reason,
        objective="serve.tok_s", obj_best=ob, obj_cand=oc, obj_delta=d, obj_ci_lo=lo, obj_ci_hi=hi,
        confidence=None if d is None else 0.95, test=None if d is None else TEST, p_value=p,
        n_cand=nc, n_best=nc, paired=1 if d is not None else 0, gate_run_id=gid,
        strategy_note=None if seq == 0 else "list: next variant in spec order",
        started_at=T0 + seq * 1200000, finished_at=fin)

# gate answers: 16 questions per run, with flips vs run 1 as listed
base_correct = [1] * 16
base_correct[5] = 0
base_correct[11] = 0
answers = {1: list(base_correct)}
answers[2] = list(base_correct); answers[2][3] = 0; answers[2][5] = 1
answers[3] = list(base_correct); answers[3][1] = 0; answers[3][7] = 0; answers[3][9] = 0; answers[3][11] = 1
answers[4] = list(base_correct); answers[4][2] = 0
answers[5] = list(base_correct)
answers[6] = list(base_correct); answers[6][5] = 1
for rid, corr in answers.items():
    for idx, c in enumerate(corr):
        target = str(12 + idx * 7)
        got = target if c else str(12 + idx * 7 + (3 if rid != 3 else -1))
        row("gate_answers", run_id=rid, idx=idx, prompt_sha256=f"{idx:02x}" * 32, response=None,
            response_sha256=f"{(rid * 31 + idx) % 256:02x}" * 32, extracted_strict=got, extracted_flex=got,
            target=target, correct=c, correct_strict=c, correct_flex=c, finish_reason="stop",
            prompt_tokens=180 + idx, completion_tokens=120 + idx, failed=0, error=None,
            latency_s=round(1.2 + idx * 0.05, 3))

# measurements + metric_stats: tok_s (higher), ttft_p95 (lower), e2el_p50 (lower)
metrics = [("tok_s", "tok/s", "higher"), ("ttft_p95", "s", "lower"), ("e2el_p50", "s", "lower")]
base_vals = {"tok_s": None, "ttft_p95": 0.820, "e2el_p50": 2.40}
regress = {4: {"ttft_p95": 0.09}, 10: {"e2el_p50": 0.06}}
for (seq, var, kind, change, state, phase, dec, reason, ob, oc, d, lo, hi, p, gid, pseq) in its:
    iid = seq_to_id[seq]
    if state == "failed":
        continue
    nrep = 2 if state == "interrupted" else 5
    arms = [("cand", oc if oc is not None else ob)] if seq == 0 else [("best", ob), ("cand", oc)]
    for metric, unit, better in metrics:
        meds = {}
        for arm, tok in arms:
            if tok is None:  # interrupted: candidate arm got 2 reps
                tok = ob * 1.01
            if metric == "tok_s":
                mid = tok
            else:
                mid = base_vals[metric] * (1000.0 / ob if arm == "best" else 1000.0 / tok) ** 0.5
                if arm == "cand" and metric in regress.get(seq, {}):
                    mid = base_vals[metric] * (1000.0 / ob) ** 0.5 * (1 + regress[seq][metric])
            meds[arm] = mid
            vals = [round(mid * (1 + rng.uniform(-0.012, 0.012)), 4) for _ in range(nrep)]
            for r, v in enumerate(vals):
                row("measurements", iteration_id=iid, arm=arm, benchmark="serve", metric=metric, rep=r,
                    value=v, unit=unit, valid=1, invalid_reason=None,
                    created_at=T0 + seq * 1200000 + 300000 + r * 60000)
        if seq == 6 and metric == "tok_s":  # one sample caught the stale server
            row("measurements", iteration_id=iid, arm="cand", benchmark="serve", metric=metric, rep=5,
                value=1412.0, unit=unit, valid=0, invalid_reason="identity check failed: pid 4121 not ours",
                created_at=T0 + seq * 1200000 + 700000)
        if seq == 0 or state == "interrupted":
            continue
        bm, cm = meds["best"], meds["cand"]
        ratio = cm / bm
        row("metric_stats", iteration_id=iid, benchmark="serve", metric=metric, unit=unit, better=better,
            best_median=round(bm, 4), cand_median=round(cm, 4), best_mad=round(bm * 0.006, 4),
            cand_mad=round(cm * 0.007, 4), ratio=round(ratio, 4), ci_lo=round(ratio - 0.011, 4),
            ci_hi=round(ratio + 0.011, 4), p_value=p if metric == "tok_s" else 0.2, n_best=5, n_cand=5)
    # log events
    if state != "failed":
        for arm, _ in arms:
            for r in range(nrep):
                rc = 0 if seq in (1, 4, 6, 8) else 3 + (r % 2)
                row("measurements", iteration_id=iid, arm=arm, benchmark="log", metric="recompiles", rep=r,
                    value=float(rc if arm == "cand" else 3 + (r % 2) if seq < 1 else 0), unit="count",
                    valid=1, invalid_reason=None, created_at=T0 + seq * 1200000 + 400000)
                row("measurements", iteration_id=iid, arm=arm, benchmark="log", metric="graph_capture_miss",
                    rep=r, value=float(0 if seq >= 1 else 14), unit="count", valid=1,
                    invalid_reason=None, created_at=T0 + seq * 1200000 + 400000)

# regressions
row("regressions", iteration_id=5, benchmark="serve", metric="ttft_p95", unit="s", before=0.8071,
    after=0.8797, delta=-0.09, ci_lo=-0.112, ci_hi=-0.068, kept=1, created_at=T0 + 4 * 1200000 + 1150000)
row("regressions", iteration_id=11, benchmark="serve", metric="e2el_p50", unit="s", before=2.2405,
    after=2.3749, delta=-0.06, ci_lo=-0.081, ci_hi=-0.039, kept=0, created_at=T0 + 10 * 1200000 + 1150000)

# iteration-specific facts, artifacts
row("env_facts", campaign_id=1, iteration_id=6, key="git./src/aiter", value="3f9e2c1 (dirty: scalem.diff)",
    created_at=T0 + 5 * 1200000)
row("env_facts", campaign_id=1, iteration_id=7, key="engine.pid", value="4121", created_at=T0 + 6 * 1200000)
for seq in (0, 1, 4, 6, 8):
    body = f"engine log of iteration {seq}\n"
    import hashlib
    row("artifacts", campaign_id=1, iteration_id=seq_to_id[seq], kind="engine-log", name=f"engine-{seq}.log",
        sha256=hashlib.sha256(body.encode()).hexdigest(), size=len(body), content=body, truncated=0,
        created_at=T0 + seq * 1200000 + 1100000)
body = "error: scale.cu:41: expression must have a constant value\n"
row("artifacts", campaign_id=1, iteration_id=6, kind="build-log", name="build-5.log",
    sha256=hashlib.sha256(body.encode()).hexdigest(), size=len(body), content=body, truncated=0,
    created_at=T0 + 5 * 1200000 + 600000)

# notes: a plain note, an invalidation, a correction linking two iterations
row("notes", iteration_id=2, kind="note", by_iteration_id=None,
    text="capture sizes cover every batch the scheduler issued; recompiles dropped 3 -> 0 per run",
    author="ana", created_at=T0 + 1 * 1200000 + 1200000)
row("notes", iteration_id=7, kind="invalidation", by_iteration_id=None,
    text="a stale server from iteration 5 still held :8000 <script>alert(1)</script>; the gain was measured on the wrong engine",
    author="ana", created_at=T0 + 7 * 1200000 + 100)
row("notes", iteration_id=4, kind="correction", by_iteration_id=9,
    text="the tile was never looked up: the key was D_GEQ_512.Q_GEQ_256 but the kernel asks for Q_GE_256; with the right key it gives +4.8% (iteration 8)",
    author="ana", created_at=T0 + 8 * 1200000 + 1200000)
row("notes", iteration_id=11, kind="note", by_iteration_id=None,
    text="scheduler delay trades latency for batching | *not* worth it at this load",
    author=None, created_at=T0 + 10 * 1200000 + 1200000)

# requests: baseline (iteration 1) and final (iteration 9) candidate arms, 40 each
for iid, scale in ((1, 1.0), (9, 0.86)):
    for s in range(40):
        ttft = round(scale * (0.35 + 0.5 * rng.random() ** 2), 4)
        e2el = round(ttft + scale * (1.6 + 0.9 * rng.random()), 4)
        row("requests", iteration_id=iid, benchmark="serve", arm="cand", rep=0, run_label="rate=3.0 seed=1",
            seq=s, intended_ns=s * 333000000, sent_ns=s * 333000000 + 150000, ttft_s=ttft, e2el_s=e2el,
            itl_mean_s=0.021, itl_max_s=0.09, n_chunks=128, prompt_tokens=1024, output_tokens=128, ok=1,
            status=200, error=None)

# the load generator's own send lag (a client self-metric), baseline and final
# only, with its own generator so the values above stay as they were
rng_lag = random.Random(11)
for iid, arm, mid in ((1, "cand", 0.0021), (9, "best", 0.0022), (9, "cand", 0.0019)):
    for r in range(5):
        row("measurements", iteration_id=iid, arm=arm, benchmark="serve", metric="send_lag_p99", rep=r,
            value=round(mid * (1 + rng_lag.uniform(-0.05, 0.05)), 6), unit="s", valid=1,
            invalid_reason=None, created_at=T0 + (iid - 1) * 1200000 + 500000)

sys.stdout.write("-- Generated by tests/reports/gen_fixture.py: one overnight campaign for the report tests.\n")
sys.stdout.write("BEGIN;\nPRAGMA defer_foreign_keys = ON;\n" + "\n".join(out) + "\nCOMMIT;\n")
