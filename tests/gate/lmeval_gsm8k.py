#!/usr/bin/env python3
"""What lm-evaluation-harness sends for GSM8K, reconstructed in Python, for
the gate's tests (Debian's python3 is enough: the standard library only).

Followed: lm-evaluation-harness v0.4.12 (commit 6d642546f4688648fced259eb3302efd36ece5af):
  - lm_eval/api/samplers.py: ContextSampler.sample() draws
    `self.rnd.sample(self.fewshot_docs(), n)`; the sampler is built with
    rnd=None and evaluator.py re-seeds it ONCE per task with
    task.set_fewshot_seed(fewshot_random_seed=1234) -> Random(1234); it is
    not re-seeded per document, so document k (in test order, or in the
    order of --samples) gets the k-th draw. The eval doc is removed from
    the shots only when fewshot split == test split (not for gsm8k: train
    vs test). FirstNSampler (gsm8k_cot's `first_n`) takes the first n.
  - lm_eval/api/task.py fewshot_context()/build_qa_turn() and
    lm_eval/api/utils.py Message: each shot is doc_to_text + " " (target
    delimiter) + doc_to_target + "\\n\\n" (fewshot delimiter); the question
    is doc_to_text with no delimiter.
  - lm_eval/tasks/gsm8k/gsm8k.yaml (version 3.0): "Question: {{question}}\\nAnswer:",
    target "{{answer}}", 5 shots from train, until ["Question:", "</s>", "<|im_end|>"],
    do_sample false, temperature 0.0.
  - lm_eval/tasks/gsm8k/gsm8k-cot.yaml (version 3.0): "Q: {{question}}\\nA:",
    8 built-in exemplars (first_n), until ["Q:", "</s>", "<|im_end|>"], do_sample false.
  - lm_eval/models/openai_completions.py LocalCompletionsAPI._create_payload:
    {"prompt", "model", "max_tokens": 256, "temperature": 0 (or the task's),
    "stop": until (+ the tokenizer's EOS string when the synchronous path
    knows one), "seed": 1234}.
The generator is CPython's: random.Random(int) seeds MT19937 with
init_by_array over the integer's 32-bit words, sample() is Lib/random.py's
(CPython 3.11.7 here; the algorithm is the same from 3.2 to 3.13).

Usage:
  lmeval_gsm8k.py vectors                       # pyrandom test vectors (stdout)
  lmeval_gsm8k.py prompts DATA TASK N [NSHOT]   # JSON lines: doc_id, shots, prompt, sha256
  lmeval_gsm8k.py fixture DATA [LM_EVAL_SRC]    # the committed fixture (stdout)
  lmeval_gsm8k.py check DATA TASK NSHOT BODIES [OFFSET]  # recorded request bodies (JSON lines)
  lmeval_gsm8k.py files DATA TASK SAMPLES RESULTS       # ratchet's --log-samples / --output-path
With LM_EVAL_SRC (a checkout of lm-evaluation-harness at v0.4.12), `fixture`
takes the sampler, Message and the task YAMLs from that checkout itself.
"""
import hashlib
import importlib.util
import json
import os
import random
import sys

LM_EVAL = "v0.4.12"
LM_EVAL_COMMIT = "6d642546f4688648fced259eb3302efd36ece5af"
FEWSHOT_SEED = 1234

# gsm8k-cot.yaml's fewshot_config.samples, as YAML folds them (one space per line break).
COT_EXEMPLARS = [
    ("There are 15 trees in the grove. Grove workers will plant trees in the grove today. After they are done, there will be 21 trees. How many trees did the grove workers plant today?",
     "There are 15 trees originally. Then there were 21 trees after some more were planted. So there must have been 21 - 15 = 6. The answer is 6."),
    ("If there are 3 cars in the parking lot and 2 more cars arrive, how many cars are in the parking lot?",
     "There are originally 3 cars. 2 more cars arrive. 3 + 2 = 5. The answer is 5."),
    ("Leah had 32 chocolates and her sister had 42. If they ate 35, how many pieces do they have left in total?",
     "Originally, Leah had 32 chocolates. Her sister had 42. So in total they had 32 + 42 = 74. After eating 35, they had 74 - 35 = 39. The answer is 39."),
    ("Jason had 20 lollipops. He gave Denny some lollipops. Now Jason has 12 lollipops. How many lollipops did Jason give to Denny?",
     "Jason started with 20 lollipops. Then he had 12 after giving some to Denny. So he gave Denny 20 - 12 = 8. The answer is 8."),
    ("Shawn has five toys. For Christmas, he got two toys each from his mom and dad. How many toys does he have now?",
     "Shawn started with 5 toys. If he got 2 toys each from his mom and dad, then that is 4 more toys. 5 + 4 = 9. The answer is 9."),
    ("There were nine computers in the server room. Five more computers were installed each day, from monday to thursday. How many computers are now in the server room?",
     "There were originally 9 computers. For each of 4 days, 5 more computers were added. So 5 * 4 = 20 computers were added. 9 + 20 is 29. The answer is 29."),
    ("Michael had 58 golf balls. On tuesday, he lost 23 golf balls. On wednesday, he lost 2 more. How many golf balls did he have at the end of wednesday?",
     "Michael started with 58 golf balls. After losing 23 on tuesday, he had 58 - 23 = 35. After losing 2 more, he had 35 - 2 = 33 golf balls. The answer is 33."),
    ("Olivia has $23. She bought five bagels for $3 each. How much money does she have left?",
     "Olivia had 23 dollars. 5 bagels for 3 dollars each will be 5 x 3 = 15 dollars. So she has 23 - 15 dollars left. 23 - 15 is 8. The answer is 8."),
]

TASKS = {
    "gsm8k": {"text": "Question: {q}\nAnswer:", "nshot": 5,
              "until": ["Question:", "</s>", "<|im_end|>"], "temperature": 0.0},
    "gsm8k_cot": {"text": "Q: {q}\nA:", "nshot": 8,
                  "until": ["Q:", "</s>", "<|im_end|>"], "temperature": 0},
}


def load_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


class Restated:
    """lm-eval's sampler and prompt layout, restated (the default)."""

    def __init__(self):
        self.cot = [{"question": q, "target": t} for q, t in COT_EXEMPLARS]

    def sampler(self, task, train):
        if task == "gsm8k":
            rnd = random.Random(FEWSHOT_SEED)
            return lambda n: rnd.sample(list(train), n)
        return lambda n: self.cot[:n]

    @staticmethod
    def join(turns):
        # (q, a) shots then the question: q + " " + a + "\n\n" ... + q
        return "".join(q + " " + a + "\n\n" for q, a in turns[:-1]) + turns[-1][0]


class FromSource(Restated):
    """The same, taking the sampler classes, Message and the YAML from an
    lm-evaluation-harness checkout (their modules need the standard library only)."""

    def __init__(self, src):
        super().__init__()
        self.samplers = self._module(src, "lm_eval/api/samplers.py")
        self.utils = self._module(src, "lm_eval/api/utils.py")
        import yaml  # python3-yaml; only this mode needs it
        with open(os.path.join(src, "lm_eval/tasks/gsm8k/gsm8k-cot.yaml")) as f:
            cot = yaml.safe_load(f)
        self.cot = cot["fewshot_config"]["samples"]
        with open(os.path.join(src, "lm_eval/tasks/gsm8k/gsm8k.yaml")) as f:
            plain = yaml.safe_load(f)
        assert plain["generation_kwargs"]["until"] == TASKS["gsm8k"]["until"]
        assert cot["generation_kwargs"]["until"] == TASKS["gsm8k_cot"]["until"]
        assert plain["doc_to_text"] == "Question: {{question}}\nAnswer:"
        assert cot["doc_to_text"] == "Q: {{question}}\nA:"
        assert [(d["question"], d["target"]) for d in self.cot] == COT_EXEMPLARS

    @staticmethod
    def _module(src, rel):
        spec = importlib.util.spec_from_file_location(rel.replace("/", "_")[:-3],
                                                      os.path.join(src, rel))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod  # dataclasses look their module up
        spec.loader.exec_module(mod)
        return mod

    def sampler(self, task, train):
        if task == "gsm8k":
            s = self.samplers.get_sampler("default")(list(train), rnd=None)
            s.set_rnd(FEWSHOT_SEED)  # evaluator.py: task_obj.set_fewshot_seed(seed=1234)
        else:
            s = self.samplers.get_sampler("first_n")(list(self.cot), rnd=None)
        return lambda n: s.sample(n=n, eval_doc=None)

    def join(self, turns):
        M = self.utils.Message
        msgs = []
        for q, a in turns[:-1]:
            msgs += [M("user", q, " "), M("assistant", a, "\n\n")]
        msgs.append(M("user", turns[-1][0], ""))
        return self.utils.messages_to_text(msgs)


def prompts(impl, data, task, n, nshot=None, docs=None):
    """[(doc_id, shot train indexes or None, prompt)] for the first n test docs (or docs)."""
    test = load_jsonl(os.path.join(data, "test.jsonl"))
    train = load_jsonl(os.path.join(data, "train.jsonl"))
    t = TASKS[task]
    nshot = t["nshot"] if nshot is None else nshot
    draw = impl.sampler(task, train)
    index = {id(d): i for i, d in enumerate(train)}
    out = []
    for doc_id in (docs if docs is not None else range(n)):
        doc = test[doc_id]
        shots = draw(nshot) if nshot > 0 else []
        turns = [(t["text"].format(q=s["question"]), s["answer"] if task == "gsm8k" else s["target"])
                 for s in shots]
        turns.append((t["text"].format(q=doc["question"]), None))
        ids = [index[id(s)] for s in shots] if task == "gsm8k" else None
        out.append((doc_id, ids, impl.join(turns)))
    return out


def sha(s):
    return hashlib.sha256(s.encode("utf-8")).hexdigest()


def cmd_vectors():
    print("# Python random vectors for tests/gate/test_gate_pyrandom.c, made by")
    print("# tests/gate/lmeval_gsm8k.py vectors with CPython %s (Lib/random.py," % sys.version.split()[0])
    print("# Modules/_randommodule.c). Lines: u32 SEED v... (getrandbits(32)); bits SEED K v...;")
    print("# below SEED N v... (_randbelow); sample SEED N K v... (sample(range(N), K));")
    print("# draws SEED N K COUNT v... (COUNT samples in a row from one generator).")
    for seed in (0, 1, 42, 1234, 2**32 - 1, 2**32, 2**40 + 5, 2**63 + 12345, 2**64 - 1):
        r = random.Random(seed)
        print("u32", seed, *[r.getrandbits(32) for _ in range(12)])
    for k in (1, 5, 13, 31, 32, 33, 53, 63, 64):
        r = random.Random(1234)
        print("bits", 1234, k, *[r.getrandbits(k) for _ in range(8)])
    for n in (1, 2, 3, 5, 100, 7473, 2**31, 2**32 + 1, 2**63 + 7):
        r = random.Random(7)
        print("below", 7, n, *[r._randbelow(n) for _ in range(10)])
    for n, k in ((7473, 5), (7473, 6), (8, 8), (8, 3), (21, 5), (22, 5), (26, 5), (27, 5),
                 (37, 6), (38, 6), (100, 30), (276, 30), (277, 30), (278, 30), (1000, 30),
                 (5, 0), (1, 1)):
        r = random.Random(1234)
        print("sample", 1234, n, k, *r.sample(range(n), k))
    r = random.Random(FEWSHOT_SEED)
    print("draws", FEWSHOT_SEED, 7473, 5, 40,
          *[j for _ in range(40) for j in r.sample(range(7473), 5)])


def cmd_prompts(data, task, n, nshot=None):
    for doc_id, ids, p in prompts(Restated(), data, task, n, nshot):
        print(json.dumps({"doc_id": doc_id, "shots": ids, "sha256": sha(p), "prompt": p}))


def cmd_fixture(data, src=None):
    impl = FromSource(src) if src else Restated()
    ours = prompts(Restated(), data, "gsm8k", 100)
    print("# lm-evaluation-harness %s (commit %s): the first 100 GSM8K prompts" % (LM_EVAL, LM_EVAL_COMMIT))
    print("# that `lm_eval --model local-completions --tasks gsm8k` (default fewshot seed 1234)")
    print("# and `--tasks gsm8k_cot` send, made by tests/gate/lmeval_gsm8k.py fixture%s" %
          (" from that checkout's own samplers.py, api/utils.py and task YAMLs" if src else ""))
    print("# with CPython %s. No GSM8K text here: train indexes of the shots and the" % sys.version.split()[0])
    print("# sha256 of each prompt's UTF-8 bytes. Lines: gsm8k DOC_ID SHA256 SHOT...; gsm8k_cot DOC_ID SHA256;")
    print("# stop TASK S... (JSON strings).")
    for task in ("gsm8k", "gsm8k_cot"):
        got = prompts(impl, data, task, 100)
        if task == "gsm8k":
            assert [p for _, _, p in got] == [p for _, _, p in ours], "restatement differs from the source"
        for doc_id, ids, p in got:
            print(task, doc_id, sha(p), *(ids or []))
        print("stop", task, *[json.dumps(s) for s in TASKS[task]["until"]])


def cmd_check(data, task, nshot, bodies, offset=0):
    """Compare recorded request bodies (one JSON per line, any order) with
    lm-eval's for the questions offset.. (a subset is lm-eval's --samples)."""
    got = {}
    with open(bodies, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                b = json.loads(line)
                got[b["prompt"]] = b
    want = prompts(Restated(), data, task, 0, nshot, range(offset, offset + len(got)))
    bad = 0
    for doc_id, _, p in want:
        b = got.get(p)
        if b is None:
            bad += 1
            print("doc %d: no request carried lm-eval's prompt (sha256 %s); it starts %r"
                  % (doc_id, sha(p), p[:200]))
            continue
        # handle_stop_sequences appends the EOS string (model_args eos_string)
        eos = os.environ.get("EOS_STRING")
        stop = TASKS[task]["until"] + ([eos] if eos and eos not in TASKS[task]["until"] else [])
        payload = {"prompt": p, "model": b.get("model"), "max_tokens": 256,
                   "temperature": TASKS[task]["temperature"], "stop": stop, "seed": 1234}
        if b != payload or type(b["temperature"]) is not type(payload["temperature"]):
            bad += 1
            print("doc %d: body differs: got %r want %r" % (
                doc_id, {k: v for k, v in b.items() if k != "prompt"},
                {k: v for k, v in payload.items() if k != "prompt"}))
    print("%d of %d requests as lm-eval %s sends them" % (len(want) - bad, len(want), LM_EVAL))
    return 1 if bad else 0


def cmd_files(data, task, samples_path, results_path):
    """Check ratchet's samples and results files the way lm-eval v0.4.12 writes them."""
    test = load_jsonl(os.path.join(data, "test.jsonl"))
    with open(samples_path, encoding="utf-8") as f:
        lines = [json.loads(x) for x in f]
    keys = ["doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter",
            "metrics", "doc_hash", "prompt_hash", "target_hash", "exact_match"]
    n = len(lines) // 2
    filters = ["strict-match"] * n + ["flexible-extract"] * n
    gen = {"until": TASKS[task]["until"], "do_sample": False}
    if task == "gsm8k":
        gen["temperature"] = 0.0
    want = {d: p for d, _, p in prompts(Restated(), data, task, n)}
    hashes = []
    for i, s in enumerate(lines):
        assert list(s) == keys, "keys %r" % list(s)
        doc = test[s["doc_id"]]
        assert s["doc"] == doc and list(s["doc"]) == ["question", "answer"]
        target = doc["answer"] if task == "gsm8k" else doc["answer"].split("####")[-1].strip()
        assert s["target"] == target
        assert s["arguments"] == {"gen_args_0": {"arg_0": want[s["doc_id"]], "arg_1": gen}}
        assert s["filter"] == filters[i] and s["metrics"] == ["exact_match"]
        assert len(s["resps"]) == 1 and len(s["resps"][0]) == 1 and len(s["filtered_resps"]) == 1
        assert s["doc_hash"] == sha(json.dumps(doc, indent=2, ensure_ascii=False))
        assert s["prompt_hash"] == sha(want[s["doc_id"]])
        assert s["target_hash"] == sha(target)
        assert s["exact_match"] in (0.0, 1.0) and type(s["exact_match"]) is float
        hashes.append(s["doc_hash"] + s["prompt_hash"] + s["target_hash"])
    with open(results_path, encoding="utf-8") as f:
        res = json.load(f)
    r = res["results"][task]
    for flt, part in (("strict-match", lines[:n]), ("flexible-extract", lines[n:])):
        xs = [s["exact_match"] for s in part]
        mean = sum(xs) / len(xs)
        se = (sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)) ** 0.5 / len(xs) ** 0.5
        assert abs(r["exact_match," + flt] - mean) < 1e-12, (flt, r, mean)
        assert abs(r["exact_match_stderr," + flt] - se) < 1e-12, (flt, r, se)
    assert r["alias"] == task and r["sample_len"] == n
    assert res["n-samples"][task] == {"original": len(test), "effective": n}
    assert res["versions"][task] == 3.0 and res["n-shot"][task] == TASKS[task]["nshot"]
    assert res["task_hashes"][task] == sha("".join(hashes))
    assert res["config"]["fewshot_seed"] == FEWSHOT_SEED
    assert res["configs"][task]["generation_kwargs"] == gen
    print("%d samples and the results of %s as lm-eval %s writes them" % (n, task, LM_EVAL))
    return 0


def main(argv):
    if len(argv) >= 2 and argv[1] == "vectors":
        cmd_vectors()
    elif len(argv) in (5, 6) and argv[1] == "prompts":
        cmd_prompts(argv[2], argv[3], int(argv[4]), int(argv[5]) if len(argv) == 6 else None)
    elif len(argv) in (3, 4) and argv[1] == "fixture":
        cmd_fixture(argv[2], argv[3] if len(argv) == 4 else None)
    elif len(argv) in (6, 7) and argv[1] == "check":
        return cmd_check(argv[2], argv[3], int(argv[4]), argv[5],
                         int(argv[6]) if len(argv) == 7 else 0)
    elif len(argv) == 6 and argv[1] == "files":
        return cmd_files(*argv[2:])
    else:
        print(__doc__.split("Usage:")[1], file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
