#!/usr/bin/env python3
"""Real profiler traces for ratchet's research agent (issue 27).

Run on the H200 (the device tool's nvidia-h200) with the PyTorch there:
    python3 experiments/profiles-h200/capture.py OUTDIR

A small decoder-only transformer with random weights (bf16, d = 1024,
16 heads, 4 layers, SwiGLU MLP, RMSNorm, a static KV cache of 512
positions) is profiled with torch.profiler (CPU and CUDA activities, so the
host-side launches -- cudaLaunchKernel, cudaGraphLaunch -- stay in the
trace beside the kernels) in:
  prefill (256 tokens a sequence, causal attention) and decode (one token a
  sequence, attention over the cache with a mask), each
  eagerly (graphs off) and replayed from a CUDA graph (graphs on), each
  at batch 4 and batch 64,
plus decode at batch 4 through torch.compile (Triton's generated kernels).
Every step ends as a serving engine's does: the sampled tokens are copied
to the host. Each trace is written raw (OUTDIR/raw) and trimmed
(OUTDIR/trim, see trim.py); each one's profiler summary table
(key_averages) goes beside it as .txt.
"""
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

D, HEADS, LAYERS, FF, VOCAB, CACHE, PROMPT = 1024, 16, 4, 2816, 32000, 512, 256
DT = torch.bfloat16
DEV = "cuda"


class Model:
    """Weights and a static KV cache; step functions that only touch static tensors."""

    def __init__(self, batch):
        g = torch.Generator(device=DEV).manual_seed(27)

        def w(*shape):
            return (torch.randn(*shape, device=DEV, generator=g) * 0.02).to(DT)

        self.batch = batch
        self.emb = w(VOCAB, D)
        self.head = w(VOCAB, D)
        self.layers = []
        for _ in range(LAYERS):
            self.layers.append(dict(
                n1=torch.ones(D, device=DEV, dtype=DT), qkv=w(3 * D, D), o=w(D, D),
                n2=torch.ones(D, device=DEV, dtype=DT), gu=w(2 * FF, D), down=w(D, FF),
                k=torch.zeros(batch, HEADS, CACHE, D // HEADS, device=DEV, dtype=DT),
                v=torch.zeros(batch, HEADS, CACHE, D // HEADS, device=DEV, dtype=DT)))
        self.nf = torch.ones(D, device=DEV, dtype=DT)
        self.positions = torch.arange(CACHE, device=DEV)

    def _block(self, x, L, attend):
        b, s, _ = x.shape
        h = F.rms_norm(x, (D,), L["n1"])
        q, k, v = F.linear(h, L["qkv"]).view(b, s, 3, HEADS, D // HEADS).permute(2, 0, 3, 1, 4)
        a = attend(q, k, v, L)
        x = x + F.linear(a.transpose(1, 2).reshape(b, s, D), L["o"])
        h = F.rms_norm(x, (D,), L["n2"])
        gate, up = F.linear(h, L["gu"]).chunk(2, dim=-1)
        return x + F.linear(F.silu(gate) * up, L["down"])

    def prefill(self, ids):
        """ids (batch, PROMPT): causal attention, the cache's first PROMPT slots written."""
        def attend(q, k, v, L):
            L["k"][:, :, :PROMPT].copy_(k)
            L["v"][:, :, :PROMPT].copy_(v)
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = F.embedding(ids, self.emb)
        for L in self.layers:
            x = self._block(x, L, attend)
        logits = F.linear(F.rms_norm(x[:, -1], (D,), self.nf), self.head)
        return logits.argmax(-1)

    def decode(self, tok, pos):
        """tok (batch,), pos a 1-element tensor: the next token; pos and tok move on in place."""
        mask = (self.positions <= pos).view(1, 1, 1, CACHE)

        def attend(q, k, v, L):
            L["k"].index_copy_(2, pos, k)
            L["v"].index_copy_(2, pos, v)
            return F.scaled_dot_product_attention(q, L["k"], L["v"], attn_mask=mask)
        x = F.embedding(tok.view(-1, 1), self.emb)
        for L in self.layers:
            x = self._block(x, L, attend)
        logits = F.linear(F.rms_norm(x[:, -1], (D,), self.nf), self.head)
        tok.copy_(logits.argmax(-1))
        pos.add_(1)
        return tok


def graphed(fn, *static):
    """fn(*static) captured in a CUDA graph (after warm-up on a side stream); a replayer."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn(*static)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = fn(*static)

    def replay(*_):
        g.replay()
        return out
    return replay


def summary(prof):
    for key in ("self_device_time_total", "self_cuda_time_total", "cpu_time_total"):
        try:
            return prof.key_averages().table(sort_by=key, row_limit=25)
        except Exception:  # the sort key's name changed across PyTorch versions
            continue
    return ""


def profile(name, outdir, step, steps, reset):
    """Warm up, then profile `steps` steps (ProfilerStep#N each); raw trace and summary written."""
    for _ in range(3):
        reset()
        step().cpu()
    torch.cuda.synchronize()
    reset()
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    path = os.path.join(outdir, "raw", name + ".json")
    sched = torch.profiler.schedule(wait=0, warmup=1, active=steps, repeat=1)
    with torch.profiler.profile(activities=acts, schedule=sched, record_shapes=True,
                                on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
        for _ in range(steps + 1):
            step().cpu()  # the sampled tokens to the host, as a serving engine does
            prof.step()
    torch.cuda.synchronize()
    with open(os.path.join(outdir, "raw", name + ".txt"), "w") as f:
        f.write(summary(prof))
    print(f"{name}: {os.path.getsize(path)} bytes", flush=True)


def run_case(outdir, phase, batch, mode):
    m = Model(batch)
    ids = torch.randint(0, VOCAB, (batch, PROMPT), device=DEV)
    tok = torch.randint(0, VOCAB, (batch,), device=DEV)
    pos = torch.tensor([PROMPT], device=DEV)
    steps = 2 if phase == "prefill" else 3

    def reset():
        pos.fill_(PROMPT)
    if phase == "prefill":
        fn, args = m.prefill, (ids,)
    else:
        fn, args = m.decode, (tok, pos)
    if mode == "graph":
        fn = graphed(fn, *args)
    elif mode == "compiled":
        t0 = time.time()
        fn = torch.compile(fn)
        fn(*args).cpu()
        print(f"torch.compile: {phase} batch {batch} compiled in {1000 * (time.time() - t0):.0f} ms",
              flush=True)
    name = f"{phase}_b{batch}_{mode}"
    profile(name, outdir, lambda: fn(*args), steps, reset)
    del m
    torch.cuda.empty_cache()


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else "out"
    os.makedirs(os.path.join(outdir, "raw"), exist_ok=True)
    info = dict(torch=torch.__version__, cuda=torch.version.cuda,
                gpu=torch.cuda.get_device_name(0), cudnn=torch.backends.cudnn.version())
    print(json.dumps(info), flush=True)
    with open(os.path.join(outdir, "raw", "versions.json"), "w") as f:
        json.dump(info, f)
    cases = [(p, b, m) for p in ("prefill", "decode") for b in (4, 64) for m in ("eager", "graph")]
    cases.append(("decode", 4, "compiled"))
    for phase, batch, mode in cases:
        try:
            run_case(outdir, phase, batch, mode)
        except Exception as e:  # one failed case must not lose the others
            print(f"{phase}_b{batch}_{mode}: FAILED: {type(e).__name__}: {e}", flush=True)


if __name__ == "__main__":
    main()
