#!/usr/bin/env python3
"""Makes a llama-architecture GGUF with seeded random weights and a real
tokenizer copied from one of llama.cpp's vocab files (models/ggml-vocab-*.gguf
in the source). Python's standard library only: the GGUF layout (version 3)
is written here from the format's description in llama.cpp's
ggml/include/gguf.h and gguf-py/gguf/constants.py (release 80fb11a).

The weights are random bytes drawn from random.Random(f"{seed}:{tensor}")
(Python seeds a str through SHA-512, so the file is the same on every machine
and every run for one seed and size). Quantized tensors are random blocks
(Q8_0: an fp16 scale and 32 int8; Q4_0: an fp16 scale and 32 nibbles); F16
tensors are random halves whose exponent is held to a small range, so no NaN
or Inf appears. Norm weights are ones.

Decoding must never produce text that llama-server refuses. Random weights
pick byte-fallback tokens (<0x00>..<0xFF>) as often as any other, and a byte
that starts a UTF-8 sequence left unfinished (max_tokens cuts it, or the next
token is not a continuation byte) is text that is not UTF-8: llama-server's
chat parser then fails the request ("does not match the expected
Content-only format"), and a stream cut there fails too. So the 256 byte
tokens are marked CONTROL (token type 3): llama.cpp renders a control token
as nothing unless special tokens are asked for, so no lone byte reaches the
text. Their output rows are also zeroed, which makes them rare (a logit of 0
against the others' random ones) but not impossible; CONTROL is what makes
the text safe.

  mkmodel.py OUT.gguf --vocab ggml-vocab-llama-spm.gguf [--type q8_0|q4_0|f16]
      [--seed N] [--embd N] [--layers N] [--ff N] [--heads N] [--kv-heads N]
      [--ctx N] [--keep-rows CHARS] [--chat-template TEXT]

--keep-rows '"]}' zeroes the output rows of every token without one of
those characters: such a model, used as strategy llm's chat endpoint with a
JSON-schema grammar, closes its strings, arrays and objects within a few
tokens (greedy decoding then prefers a token whose logit is not 0), so its
answers end inside max_tokens. --chat-template stores a template (none by
default). Without one llama-server falls back to chatml, whose
<|im_start|> the llama-spm vocab does not have, and a JSON-schema request
then fails ("Failed to initialize samplers"); start such a server with
--chat-template llama2 (its [INST] is plain text for this vocab).
"""
import argparse
import hashlib
import random
import struct
import sys

# GGUF value types (gguf.h enum gguf_type).
U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
SCALAR = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i",
          F32: "<f", BOOL: "<?", U64: "<Q", I64: "<q", F64: "<d"}
# ggml types (ggml.h enum ggml_type) and their block (elements, bytes).
GGML_F32, GGML_F16, GGML_Q4_0, GGML_Q8_0 = 0, 1, 2, 8
BLOCK = {GGML_F32: (1, 4), GGML_F16: (1, 2), GGML_Q4_0: (32, 18), GGML_Q8_0: (32, 34)}
TYPES = {"f16": GGML_F16, "q8_0": GGML_Q8_0, "q4_0": GGML_Q4_0}
# general.file_type (llama.h enum llama_ftype).
FTYPE = {"f16": 1, "q8_0": 7, "q4_0": 2}
TOKEN_CONTROL = 3
ALIGN = 32


class Reader:
    """Reads the key/value section of a GGUF file (the vocab files have no tensors)."""

    def __init__(self, data):
        self.d, self.o = data, 0

    def take(self, fmt):
        v = struct.unpack_from(fmt, self.d, self.o)[0]
        self.o += struct.calcsize(fmt)
        return v

    def string(self):
        n = self.take("<Q")
        s = self.d[self.o:self.o + n].decode("utf-8")
        self.o += n
        return s

    def value(self, t):
        if t == STR:
            return self.string()
        if t == ARR:
            et, n = self.take("<I"), self.take("<Q")
            return (et, [self.value(et) for _ in range(n)])
        return self.take(SCALAR[t])


def read_kv(path):
    r = Reader(open(path, "rb").read())
    if r.d[:4] != b"GGUF":
        sys.exit(f"mkmodel: {path}: not a GGUF file")
    r.o = 4
    _version, _ntensors, nkv = r.take("<I"), r.take("<Q"), r.take("<Q")
    kv = {}
    for _ in range(nkv):
        k = r.string()
        t = r.take("<I")
        kv[k] = (t, r.value(t))
    return kv


def put_value(out, t, v):
    if t == STR:
        b = v.encode("utf-8")
        out += struct.pack("<Q", len(b)) + b
    elif t == ARR:
        et, items = v
        out += struct.pack("<IQ", et, len(items))
        if et in SCALAR:
            out += struct.pack("<%d%s" % (len(items), SCALAR[et][1]), *items)
        else:
            for x in items:
                put_value(out, et, x)
    else:
        out += struct.pack(SCALAR[t], v)


def half_bits(x):
    return struct.unpack("<H", struct.pack("<e", x))[0]


def f16_table():
    """Maps a random byte to the high byte of a half in +-[2^-8, 2^-6)."""
    t = bytearray(256)
    for b in range(256):
        sign, exp, mant = b >> 7, 7 + (b >> 1 & 1), b & 3  # exponents 7, 8 (bias 15)
        t[b] = sign << 7 | exp << 2 | mant
    return bytes(t)


def random_tensor(seed, name, ggml_type, n, scale):
    rng = random.Random(f"{seed}:{name}")
    if ggml_type == GGML_F16:
        data = bytearray(rng.randbytes(2 * n))
        data[1::2] = bytes(data[1::2]).translate(f16_table())
        return data
    per, size = BLOCK[ggml_type]
    nb = n // per
    data = bytearray(rng.randbytes(nb * size))
    d = struct.pack("<H", half_bits(scale))
    data[0::size] = d[:1] * nb
    data[1::size] = d[1:] * nb
    return data


def zero_rows(data, ggml_type, ne0, rows):
    per, size = BLOCK[ggml_type]
    row = ne0 // per * size
    for r in rows:
        data[r * row:(r + 1) * row] = bytes(row)


def tensors_of(a, n_vocab):
    """Name, dims (ggml order: ne0 first) and whether it is a weight matrix."""
    e, f, kv = a.embd, a.ff, a.embd // a.heads * a.kv_heads
    t = [("token_embd.weight", [e, n_vocab], True)]
    for i in range(a.layers):
        p = f"blk.{i}."
        t += [(p + "attn_norm.weight", [e], False), (p + "attn_q.weight", [e, e], True),
              (p + "attn_k.weight", [e, kv], True), (p + "attn_v.weight", [e, kv], True),
              (p + "attn_output.weight", [e, e], True), (p + "ffn_norm.weight", [e], False),
              (p + "ffn_gate.weight", [e, f], True), (p + "ffn_up.weight", [e, f], True),
              (p + "ffn_down.weight", [f, e], True)]
    t += [("output_norm.weight", [e], False), ("output.weight", [e, n_vocab], True)]
    return t


def main():
    ap = argparse.ArgumentParser(description="random-weight llama GGUF with a real tokenizer")
    ap.add_argument("out")
    ap.add_argument("--vocab", required=True, help="a llama.cpp models/ggml-vocab-*.gguf")
    ap.add_argument("--type", default="q8_0", choices=sorted(TYPES))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--embd", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--ff", type=int, default=768)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=0, help="default: --heads")
    ap.add_argument("--ctx", type=int, default=4096)
    ap.add_argument("--keep-rows", default="", help="zero the output rows of tokens without these characters")
    ap.add_argument("--chat-template", default="")
    a = ap.parse_args()
    a.kv_heads = a.kv_heads or a.heads
    if a.embd % 32 or a.ff % 32 or a.embd % a.heads or a.heads % a.kv_heads:
        sys.exit("mkmodel: --embd and --ff must be multiples of 32, --embd of --heads, --heads of --kv-heads")

    vocab = read_kv(a.vocab)
    if "tokenizer.ggml.tokens" not in vocab:
        sys.exit(f"mkmodel: {a.vocab}: no tokenizer.ggml.tokens")
    tokens = vocab["tokenizer.ggml.tokens"][1][1]
    n_vocab = len(tokens)
    byte_ids = [i for i, s in enumerate(tokens) if len(s) == 6 and s.startswith("<0x") and s.endswith(">")]
    if "tokenizer.ggml.token_type" in vocab:
        types = list(vocab["tokenizer.ggml.token_type"][1][1])
        for i in byte_ids:
            types[i] = TOKEN_CONTROL
        vocab["tokenizer.ggml.token_type"] = (ARR, (I32, types))

    wt = TYPES[a.type]
    kv = [("general.architecture", STR, "llama"),
          ("general.name", STR, f"random-llama-{a.type}-seed{a.seed}"),
          ("general.file_type", U32, FTYPE[a.type]),
          ("general.alignment", U32, ALIGN),
          ("llama.context_length", U32, a.ctx),
          ("llama.embedding_length", U32, a.embd),
          ("llama.block_count", U32, a.layers),
          ("llama.feed_forward_length", U32, a.ff),
          ("llama.attention.head_count", U32, a.heads),
          ("llama.attention.head_count_kv", U32, a.kv_heads),
          ("llama.rope.dimension_count", U32, a.embd // a.heads),
          ("llama.rope.freq_base", F32, 10000.0),
          ("llama.attention.layer_norm_rms_epsilon", F32, 1e-5),
          ("llama.vocab_size", U32, n_vocab)]
    kv += [(k, t, v) for k, (t, v) in vocab.items() if k.startswith("tokenizer.")]
    if a.chat_template:
        kv = [x for x in kv if x[0] != "tokenizer.chat_template"] + [("tokenizer.chat_template", STR, a.chat_template)]
    zeroed = set(byte_ids)
    if a.keep_rows:
        zeroed |= {i for i, t in enumerate(tokens) if not any(ch in t for ch in a.keep_rows)}

    tensors = tensors_of(a, n_vocab)
    infos, offset = [], 0
    for name, dims, mat in tensors:
        ty = wt if mat else GGML_F32
        n = 1
        for d in dims:
            n *= d
        per, size = BLOCK[ty]
        infos.append((name, dims, ty, offset, n))
        offset += (n // per * size + ALIGN - 1) // ALIGN * ALIGN

    head = bytearray(b"GGUF")
    head += struct.pack("<IQQ", 3, len(tensors), len(kv))
    for k, t, v in kv:
        put_value(head, STR, k)
        head += struct.pack("<I", t)
        put_value(head, t, v)
    for name, dims, ty, off, _n in infos:
        put_value(head, STR, name)
        head += struct.pack("<I", len(dims)) + struct.pack("<%dQ" % len(dims), *dims)
        head += struct.pack("<IQ", ty, off)
    head += bytes(-len(head) % ALIGN)

    sha = hashlib.sha256()
    params = 0
    with open(a.out, "wb") as f:
        f.write(head)
        sha.update(head)
        for name, dims, ty, _off, n in infos:
            if ty == GGML_F32:
                data = bytearray(struct.pack("<%df" % n, *([1.0] * n)))
            else:
                # Scale: a weight's spread about 1/sqrt(fan-in) (uniform int8 has sd ~74).
                data = random_tensor(a.seed, name, ty, n, (dims[0] ** -0.5) / (74 if ty == GGML_Q8_0 else 4.6))
                if name == "output.weight":
                    zero_rows(data, ty, dims[0], sorted(zeroed))
                params += n
            data += bytes(-len(data) % ALIGN)
            f.write(data)
            sha.update(data)
    print(f"{a.out}: {params / 1e6:.1f}M parameters, {a.type}, {n_vocab} tokens "
          f"({len(byte_ids)} byte tokens CONTROL), seed {a.seed}, sha256 {sha.hexdigest()}")


if __name__ == "__main__":
    main()
