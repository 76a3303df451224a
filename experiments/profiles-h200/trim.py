#!/usr/bin/env python3
"""Trims PyTorch profiler Chrome traces to what ratchet reads, small enough to commit.
    python3 trim.py RAWDIR TRIMDIR [MAX_BYTES]
Kept: kernels, memcpy/memset, the host's CUDA runtime and driver calls (the
launches), the cpu_ops that launched something, step annotations, the
metadata; each event's args cut to the ones named below. Dropped: Python
function events, flow arrows, profiler overhead. When a trace is still over
MAX_BYTES (300000), its last steps go (a kernel goes with the launch it
came from). The header's "_comment" names the tool, versions and command.
"""
import json
import os
import sys

GPU = {"kernel", "gpu_memcpy", "gpu_memset"}
HOST = {"cuda_runtime", "cuda_driver"}
ARGS = {
    "kernel": ("External id", "device", "stream", "correlation", "registers per thread",
               "shared memory", "grid", "block", "graph id"),
    "gpu_memcpy": ("External id", "device", "stream", "correlation", "bytes"),
    "gpu_memset": ("External id", "device", "stream", "correlation", "bytes"),
    "cuda_runtime": ("External id", "cbid", "correlation", "graph id"),
    "cuda_driver": ("External id", "cbid", "correlation", "graph id"),
    "cpu_op": ("External id", "Input Dims", "Input type"),
    "user_annotation": ("External id",),
    "gpu_user_annotation": ("External id",),
}


def cut(ev):
    cat = ev.get("cat", "")
    keep = ARGS.get(cat, ())
    out = {k: ev[k] for k in ("ph", "cat", "name", "pid", "tid", "ts", "dur") if k in ev}
    args = {k: v for k, v in ev.get("args", {}).items() if k in keep}
    if args:
        out["args"] = args
    return out


def is_step(ev):
    return ev.get("name", "").startswith("ProfilerStep#")


def select(events, nsteps):
    """The events ratchet reads, of the first nsteps steps (all when None)."""
    xs = [e for e in events if e.get("ph") == "X"]
    steps = sorted((e for e in xs if e.get("cat") == "user_annotation" and is_step(e)),
                   key=lambda e: e["ts"])
    if nsteps is not None and steps:
        steps = steps[:nsteps]
        lo, hi = steps[0]["ts"], steps[-1]["ts"] + steps[-1]["dur"]
        names = {s["name"] for s in steps}
        host = [e for e in xs if e.get("cat") not in GPU and e.get("cat") != "gpu_user_annotation"
                and lo <= e["ts"] <= hi]
    else:
        names = None
        host = [e for e in xs if e.get("cat") not in GPU and e.get("cat") != "gpu_user_annotation"]
    launches = [e for e in host if e.get("cat") in HOST]
    corr = {e.get("args", {}).get("correlation") for e in launches}
    ext = {e.get("args", {}).get("External id") for e in launches}
    out = []
    for e in xs:
        cat = e.get("cat")
        if cat in GPU:
            if names is None or e.get("args", {}).get("correlation") in corr:
                out.append(e)
        elif cat == "gpu_user_annotation":
            if names is None or e.get("name") in names:
                out.append(e)
    for e in host:
        cat = e.get("cat")
        if cat in HOST or cat == "user_annotation" and is_step(e) or \
                cat == "cpu_op" and e.get("args", {}).get("External id") in ext:
            out.append(e)
    meta = [e for e in events if e.get("ph") == "M"]
    out.sort(key=lambda e: (e["ts"], e.get("pid") if isinstance(e.get("pid"), int) else 0))
    return meta + [cut(e) for e in out], len(steps)


def write(doc, events, path, comment):
    head = {k: v for k, v in doc.items() if k != "traceEvents"}
    head = {"_comment": comment, **head}
    text = json.dumps(head, indent=1)[:-2] + ',\n "traceEvents": [\n'
    text += ",\n".join(json.dumps(e, separators=(",", ":")) for e in events)
    text += "\n ]\n}\n"
    with open(path, "w") as f:
        f.write(text)
    return len(text.encode())


def main():
    raw, dst = sys.argv[1], sys.argv[2]
    cap = int(sys.argv[3]) if len(sys.argv) > 3 else 300000
    os.makedirs(dst, exist_ok=True)
    vpath = os.path.join(raw, "versions.json")
    v = json.load(open(vpath)) if os.path.exists(vpath) else {}
    for fn in sorted(os.listdir(raw)):
        if not fn.endswith(".json") or fn == "versions.json":
            continue
        doc = json.load(open(os.path.join(raw, fn)))
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
        if not isinstance(doc, dict):
            doc = {}
        nsteps, kept = None, None
        while True:
            sel, kept = select(events, nsteps)
            comment = ("ratchet test fixture, real: PyTorch %s profiler (Kineto, CUDA %s) on an %s, "
                       "trace of experiments/profiles-h200/capture.py case %s (export_chrome_trace), "
                       "trimmed by experiments/profiles-h200/trim.py to %d steps "
                       "(Python function events, flow arrows and cpu_ops that launched nothing dropped)."
                       % (v.get("torch", "?"), v.get("cuda", "?"), v.get("gpu", "?"),
                          fn[:-5], kept))
            size = write(doc, sel, os.path.join(dst, fn), comment)
            if size <= cap or kept <= 1:
                break
            nsteps = kept - 1
        print("%s: %d events -> %d, %d steps, %d bytes" % (fn, len(events), len(sel), kept, size))


if __name__ == "__main__":
    main()
