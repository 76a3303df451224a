# Convert a Kernel Tuner cache file (a brute force) to a ratchet sweep file (docs/search.md).
# usage: convert.py CACHE.json NAME OUT.jsonl [RESTRICTION ...]
import json, sys
src, name, out = sys.argv[1], sys.argv[2], sys.argv[3]
restr = sys.argv[4:]
d = json.load(open(src))
tp = d['tune_params']
keys = d['tune_params_keys']
hdr = {"sweep": 1, "name": name, "metric": d.get('objective', 'time'), "goal": "min",
       "parameters": [{"name": k, "values": tp[k]} for k in keys if len(tp[k]) > 1],
       "restrictions": restr}
var = [k for k in keys if len(tp[k]) > 1]
with open(out, 'w') as f:
    f.write(json.dumps(hdr, separators=(',', ':')) + "\n")
    n = 0
    for k, v in sorted(d['cache'].items()):
        t = v.get('time')
        pt = {p: v[p] for p in var}
        if not isinstance(t, float) or t >= 1e19:
            f.write(json.dumps({"point": pt, "failed": True}, separators=(',', ':')) + "\n")
            continue
        # repeats 7 to 32 are the steady state (the first five or six of a fast
        # kernel run while the GPU raises its clock: repeats 1 to 3 of the
        # fastest tenth are 12% to 18% slower; README.md); keep every fifth of
        # them: repeats 7, 12, 17, 22, 27 and 32
        s = [round(x, 4) for x in v['times'][6::5]]
        f.write(json.dumps({"point": pt, "samples": s}, separators=(',', ':')) + "\n")
        n += 1
print(n, "points")
