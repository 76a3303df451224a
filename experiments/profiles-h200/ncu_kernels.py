#!/usr/bin/env python3
"""A handful of real kernels for Nsight Compute (issue 27): a bf16 and an fp32
matmul (cuBLAS/cuBLASLt), softmax, layer norm, RMSNorm, SiLU and causal
flash attention, on the H200 with PyTorch. Only the kernels between
cudaProfilerStart and cudaProfilerStop are profiled (ncu --profile-from-start off).
    ncu --csv --profile-from-start off ... python3 ncu_kernels.py
"""
import torch
import torch.nn.functional as F

torch.backends.cuda.matmul.allow_tf32 = False
dev, bf = "cuda", torch.bfloat16
x = torch.randn(4096, 4096, device=dev, dtype=bf)
y = torch.randn(4096, 4096, device=dev, dtype=bf)
a = torch.randn(2048, 2048, device=dev)
w = torch.ones(4096, device=dev, dtype=bf)
q = torch.randn(8, 16, 1024, 64, device=dev, dtype=bf)
for _ in range(2):  # warm-up: library handles, autotuned choices
    x @ y, a @ a, torch.softmax(x, -1), F.layer_norm(x, (4096,)), F.rms_norm(x, (4096,), w)
    F.silu(x), F.scaled_dot_product_attention(q, q, q, is_causal=True)
torch.cuda.synchronize()
torch.cuda.profiler.start()
x @ y
a @ a
torch.softmax(x, -1)
F.layer_norm(x, (4096,))
F.rms_norm(x, (4096,), w)
F.silu(x)
F.scaled_dot_product_attention(q, q, q, is_causal=True)
torch.cuda.synchronize()
torch.cuda.profiler.stop()
