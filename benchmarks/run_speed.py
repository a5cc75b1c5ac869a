#!/usr/bin/env python
"""Speed and memory of the spacy-paraphrase pipeline against plain Hugging Face.

One command measures, on the same machine, the same backbone and the same
pairs (see ``benchmarks/README.md``):

inference (pairs/s, words/s, RSS after loading, before and at the peak of the run)
    (a) ``backbone``: the bare ``AutoModel`` forward pass on pre-tokenized,
        pre-padded batches under ``torch.inference_mode()`` (the limit);
    (b) ``hf``: ``AutoModelForTokenClassification`` doing the whole job
        (tokenize the word lists as a pair, forward, softmax, first piece of
        each word back to the word via ``word_ids()``, pair score), as in
        ``benchmarks.hf_token_reference``;
    (c) ``pipeline``: ``nlp.pipe(pair_docs, batch_size=B)`` with the pipeline
        of ``configs/contextdep_cpu.cfg`` (untrained head); the pair Docs are
        built with ``make_pair_doc`` beforehand and that time is reported on
        its own.
training (seconds per epoch, same N examples, same batches, same steps)
    (b) a torch loop: token classification over the pair, labels = the word
        targets on each word's first piece (-100 elsewhere), AdamW lr 5e-5,
        gradient clipping 1.0 (the HF Trainer's default);
    (c) the ``nlp.update`` loop of ``spacy train`` with the config's optimizer.
scaling
    (b) and (c) inference on generated pairs of fixed total length (words) for
    each batch size.

Every measurement runs in a fresh subprocess (``--worker SYSTEM``) with the same
number of torch threads; each worker writes its result as JSON. The parent
stays small (it imports neither torch nor spaCy) because a child's
``ru_maxrss`` starts at its parent's peak RSS on Linux (``getrusage`` usage is
kept across ``fork``/``exec``); workers report ``VmHWM`` next to it as a check.

Usage::

    python -m benchmarks.run_speed                 # full benchmark
    python -m benchmarks.run_speed --quick --no-data   # seconds-scale smoke run
"""
import argparse
import datetime
import json
import math
import os
import platform
import random
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional

REPO = Path(__file__).resolve().parents[1]
MODULE = "benchmarks.run_speed"  # workers run as `python -m MODULE --worker ...` from REPO
DEFAULT_DATA = REPO.parent / "shared" / "data" / "contextdep" / "dev.tsv"
DEFAULT_CONFIG = REPO / "configs" / "contextdep_cpu.cfg"
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_OUTPUT = REPO / "benchmarks" / "results" / "speed.json"
INFER_SYSTEMS = ("backbone", "hf", "pipeline")
TRAIN_SYSTEMS = ("hf", "pipeline")
SCALE_SYSTEMS = ("hf", "pipeline")
SYSTEM_LABELS = {
    "backbone": "(a) bare backbone forward",
    "hf": "(b) plain HF token classification",
    "pipeline": "(c) spacy-paraphrase pipeline",
}
# ContextDeP dev: first turn ~82 words (mean), second ~35; generated pairs
# follow these means.
GEN_FIRST_MEAN, GEN_FIRST_SD = 90, 30
GEN_SECOND_MEAN, GEN_SECOND_SD = 35, 15
FIRST_SHARE = GEN_FIRST_MEAN / (GEN_FIRST_MEAN + GEN_SECOND_MEAN)

# A small interview-like vocabulary (function words dominate, some long and
# rare words so that wordpieces per word are realistic, ~1.2-1.3).
_WORDS = (
    "the a an and but or so because if that this these those it it's I I'm you you're we "
    "they he she his her their our my your me us them is are was were be been being have "
    "has had do does did don't didn't can can't could would should will won't not no yes "
    "well know think mean really just very about there here what which who when where why "
    "how all some any many much more most other another such only also even still again "
    "now then today yesterday tomorrow year years time times people country government "
    "president administration congress senator campaign election voters policy economy "
    "jobs unemployment taxes healthcare insurance military troops war peace security "
    "border immigration reform budget deficit spending billion million percent dollars "
    "interview question answer morning evening story news network reporter correspondent "
    "said says say told tell talk talking going go went come came get got make made take "
    "took see saw look looking want wanted need needed believe believed understand "
    "important difficult different possible clear certainly obviously absolutely "
    "unprecedented bipartisan investigation administration's Washington America American "
    "Americans Iraq Afghanistan Obama Bush Clinton Republicans Democrats Pentagon "
    "negotiations intelligence responsibility accountability circumstances "
    "1990s 2008 20th 9/11 -- Mr. Ms. Dr. U.S. OK"
).split()
_PUNCT_WORDS = ("well,", "know,", "think,", "now,", "right?", "that.", "today.", "there.", "yes,", "no.")


# --------------------------------------------------------------------------- #
# Shared helpers (parent and workers)
# --------------------------------------------------------------------------- #


def _status_mb(field: str) -> Optional[float]:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def memory_now() -> Dict[str, Optional[float]]:
    """Current RSS (MiB), and the peak so far both as ru_maxrss and VmHWM."""
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if sys.platform == "darwin":  # bytes there, KiB on Linux
        maxrss /= 1024.0
    return {
        "rss_mb": _status_mb("VmRSS"),
        "maxrss_mb": maxrss / 1024.0,
        "hwm_mb": _status_mb("VmHWM"),
    }


def batches(seq: list, size: int) -> List[list]:
    return [seq[i : i + size] for i in range(0, len(seq), size)]


def n_words(pairs: List[dict]) -> int:
    return sum(len(p["first"]) + len(p["second"]) for p in pairs)


def generate_pairs(
    n: int, seed: int, first_len: Optional[int] = None, second_len: Optional[int] = None
) -> List[dict]:
    """Seeded pairs of interview-like words. Lengths: given, or drawn around
    ContextDeP's (first ~90 words, second ~35). About 57% are paraphrases (as
    in ContextDeP dev), with one highlighted run per turn."""
    rng = random.Random(seed)
    vocab = list(_WORDS) + list(_PUNCT_WORDS)
    pairs = []
    for k in range(n):
        n1 = first_len or int(min(200, max(10, round(rng.gauss(GEN_FIRST_MEAN, GEN_FIRST_SD)))))
        n2 = second_len or int(min(120, max(3, round(rng.gauss(GEN_SECOND_MEAN, GEN_SECOND_SD)))))
        first = [rng.choice(vocab) for _ in range(n1)]
        second = [rng.choice(vocab) for _ in range(n2)]
        t1, t2 = [0.0] * n1, [0.0] * n2
        if rng.random() < 0.57:
            for t, m in ((t1, n1), (t2, n2)):
                run = rng.randint(1, max(1, min(10, m)))
                start = rng.randint(0, m - run)
                for i in range(start, start + run):
                    t[i] = 1.0
        pairs.append({"id": f"gen-{seed}-{k}", "first": first, "second": second,
                      "targets_first": t1, "targets_second": t2})
    return pairs


# --------------------------------------------------------------------------- #
# Workers (each runs in its own subprocess)
# --------------------------------------------------------------------------- #


def _setup_torch(threads: int):
    import torch

    if threads > 0:
        torch.set_num_threads(threads)
    import transformers

    transformers.logging.set_verbosity_error()
    return torch


def _resolve(model: str) -> str:
    from spacy_paraphrase.backbones import resolve_model_name

    return resolve_model_name(model)


def _source(args) -> str:
    """Where (a) and (b) load the backbone from: resolved once by the prepare
    worker, so that these workers never import spaCy (it would count in their
    memory)."""
    return args.source or args.model


def _timed(fn):
    """Run fn(); return (result, wall seconds, CPU seconds of this process)."""
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


def _maybe_profile(profile_out: Optional[str], fn):
    if not profile_out:
        return _timed(fn)
    import cProfile

    prof = cProfile.Profile()
    result = _timed(lambda: prof.runcall(fn))
    prof.dump_stats(profile_out)
    return result


def _repeat(args, fn, setup=None):
    """Time fn() args.repeats times (setup() before each, untimed); the first
    run is profiled when asked. Returns (median wall, its CPU time, all walls)."""
    runs = []
    for k in range(max(1, args.repeats)):
        if setup is not None:
            setup()
        _, wall, cpu = _maybe_profile(args.profile_out if k == 0 else None, fn)
        runs.append((wall, cpu))
    ordered = sorted(runs)
    wall, cpu = ordered[len(ordered) // 2]
    return wall, cpu, [w for w, _ in runs]


def _infer_result(pairs, batch_size, wall, cpu, mem_load, mem_before, extra=None):
    mem_after = memory_now()
    out = {
        "n_pairs": len(pairs),
        "n_words": n_words(pairs),
        "batch_size": batch_size,
        "n_batches": math.ceil(len(pairs) / batch_size),
        "seconds": wall,
        "cpu_seconds": cpu,
        "pairs_per_s": len(pairs) / wall,
        "words_per_s": n_words(pairs) / wall,
        "rss_after_load_mb": mem_load["rss_mb"],
        "rss_before_run_mb": mem_before["rss_mb"],
        "peak_before_run_mb": mem_before["maxrss_mb"],
        "peak_rss_mb": mem_after["maxrss_mb"],
        "peak_hwm_mb": mem_after["hwm_mb"],
    }
    out.update(extra or {})
    return out


def _word_pairs(pairs):
    """The (first words, second words) of each pair, as hf_token_reference takes them."""
    return [(p["first"], p["second"]) for p in pairs]


def worker_infer_backbone(args, pairs):
    torch = _setup_torch(args.threads)
    from transformers import AutoModel, AutoTokenizer

    from . import hf_token_reference as hf

    source = _source(args)
    (tokenizer, model), load_s, _ = _timed(
        lambda: (AutoTokenizer.from_pretrained(source, use_fast=True), AutoModel.from_pretrained(source))
    )
    model.eval()
    mem_load = memory_now()
    inputs, prep_s, _ = _timed(
        lambda: [dict(hf.tokenize(tokenizer, b)) for b in batches(_word_pairs(pairs), args.batch_size)]
    )
    n_pieces = sum(int(x["attention_mask"].sum()) for x in inputs)
    n_padded = sum(int(x["input_ids"].numel()) for x in inputs)

    def run():
        for x in inputs:
            model(**x)

    with torch.inference_mode():
        model(**inputs[0])  # warm-up
        mem_before = memory_now()
        wall, cpu, walls = _repeat(args, run)
    return _infer_result(
        pairs, args.batch_size, wall, cpu, mem_load, mem_before,
        {"load_seconds": load_s, "prepare_seconds": prep_s, "n_wordpieces": n_pieces, "run_seconds": walls,
         "n_padded_wordpieces": n_padded, "threads_used": torch.get_num_threads()},
    )


def hf_predict_batch(hf, tokenizer, model, batch):
    """The whole job of the plain HF token classifier for one batch: word
    probabilities of both turns and the pair score."""
    out = []
    for first, second in hf.predict_batch(tokenizer, model, batch):
        out.append((first, second, hf.pair_score((first, second))))
    return out


def worker_infer_hf(args, pairs):
    torch = _setup_torch(args.threads)
    from . import hf_token_reference as hf

    source = _source(args)
    (tokenizer, model), load_s, _ = _timed(lambda: hf.load(source))
    model.eval()
    mem_load = memory_now()
    groups = batches(_word_pairs(pairs), args.batch_size)
    results = []

    def run():
        for b in groups:
            results.extend(hf_predict_batch(hf, tokenizer, model, b))

    with torch.inference_mode():
        hf_predict_batch(hf, tokenizer, model, groups[0])  # warm-up
        mem_before = memory_now()
        wall, cpu, walls = _repeat(args, run, setup=results.clear)
    assert len(results) == len(pairs)
    return _infer_result(
        pairs, args.batch_size, wall, cpu, mem_load, mem_before,
        {"load_seconds": load_s, "run_seconds": walls, "threads_used": torch.get_num_threads()},
    )


def _load_nlp(args):
    import spacy
    import spacy_paraphrase  # noqa: F401  (registers the architectures)

    config = spacy.util.load_config(args.config)
    config["components"]["transformer"]["model"]["name"] = args.model
    return spacy.util.load_model_from_config(config, auto_fill=True)


def worker_infer_pipeline(args, pairs):
    torch = _setup_torch(args.threads)
    from spacy_paraphrase.pair_doc import make_pair_doc
    from spacy_paraphrase.paraphrase_spans import token_probs

    def load():
        nlp = _load_nlp(args)
        nlp.initialize()
        return nlp

    nlp, load_s, _ = _timed(load)
    mem_load = memory_now()
    docs, build_s, _ = _timed(lambda: [make_pair_doc(nlp, p["first"], p["second"]) for p in pairs])
    warm = [make_pair_doc(nlp, p["first"], p["second"]) for p in pairs[: args.batch_size]]
    list(nlp.pipe(warm, batch_size=args.batch_size))  # warm-up
    mem_before = memory_now()
    out_docs: list = []

    n_setups = [0]

    def setup():
        # Fresh, unannotated pair Docs for every repeat (built untimed).
        out_docs.clear()
        if n_setups[0] > 0:
            docs[:] = [make_pair_doc(nlp, p["first"], p["second"]) for p in pairs]
        n_setups[0] += 1

    wall, cpu, walls = _repeat(
        args, lambda: out_docs.extend(nlp.pipe(docs, batch_size=args.batch_size)), setup=setup
    )
    assert len(out_docs) == len(pairs)
    for doc in out_docs:
        assert len(token_probs(doc)) == len(doc)
    return _infer_result(
        pairs, args.batch_size, wall, cpu, mem_load, mem_before,
        {"load_seconds": load_s, "run_seconds": walls, "build_docs_seconds": build_s,
         "build_docs_per_s": len(pairs) / build_s if build_s > 0 else None,
         "threads_used": torch.get_num_threads()},
    )


def _train_result(pairs, batch_size, wall, cpu, mem_load, mem_before, losses, extra=None):
    mem_after = memory_now()
    steps = math.ceil(len(pairs) / batch_size)
    out = {
        "n_examples": len(pairs),
        "n_words": n_words(pairs),
        "batch_size": batch_size,
        "steps": steps,
        "seconds_per_epoch": wall,
        "cpu_seconds": cpu,
        "seconds_per_step": wall / steps,
        "examples_per_s": len(pairs) / wall,
        "losses": losses,
        "rss_after_load_mb": mem_load["rss_mb"],
        "rss_before_run_mb": mem_before["rss_mb"],
        "peak_before_run_mb": mem_before["maxrss_mb"],
        "peak_rss_mb": mem_after["maxrss_mb"],
        "peak_hwm_mb": mem_after["hwm_mb"],
    }
    out.update(extra or {})
    return out


def worker_train_hf(args, pairs):
    torch = _setup_torch(args.threads)
    from . import hf_token_reference as hf

    torch.manual_seed(args.seed)
    source = _source(args)
    (tokenizer, model), load_s, _ = _timed(lambda: hf.load(source))
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.01)
    mem_load = memory_now()

    def encode(batch):
        enc, first_pieces = hf.encode(tokenizer, _word_pairs(batch))
        targets = [(p["targets_first"], p["targets_second"]) for p in batch]
        enc["labels"] = hf.labels(enc, first_pieces, targets)
        return dict(enc)

    # Like datasets.map + a padding collator: tokenized once, before the epochs.
    encoded, prep_s, _ = _timed(lambda: [encode(b) for b in batches(pairs, args.batch_size)])

    def step(x):
        loss = model(**x).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()
        return float(loss)

    step(encoded[0])  # warm-up step
    mem_before = memory_now()
    losses: list = []
    _, wall, cpu = _maybe_profile(args.profile_out, lambda: losses.extend(step(x) for x in encoded))
    return _train_result(
        pairs, args.batch_size, wall, cpu, mem_load, mem_before, losses,
        {"load_seconds": load_s, "prepare_seconds": prep_s, "threads_used": torch.get_num_threads()},
    )


def worker_train_pipeline(args, pairs):
    torch = _setup_torch(args.threads)
    from spacy.training import Example
    from spacy.util import fix_random_seed
    from spacy_paraphrase.pair_doc import copy_pair_doc, make_pair_doc

    fix_random_seed(args.seed)

    def load():
        nlp = _load_nlp(args)
        examples = []
        for p in pairs:
            ref = make_pair_doc(nlp, p["first"], p["second"])
            ref.spans["paraphrase"] = []
            ref.spans["paraphrase"].attrs["token_targets"] = list(p["targets_first"]) + list(p["targets_second"])
            ref.cats["PARAPHRASE"] = float(any(p["targets_first"]))
            examples.append(Example(copy_pair_doc(ref, nlp.vocab), ref))
        optimizer = nlp.initialize(lambda: examples)
        return nlp, examples, optimizer

    (nlp, examples, optimizer), load_s, _ = _timed(load)
    mem_load = memory_now()
    dropout = float(nlp.config["training"]["dropout"])
    groups = batches(examples, args.batch_size)

    def step(batch):
        # What `spacy train` does per step (accumulate_gradient = 1).
        losses: Dict[str, float] = {}
        nlp.update(batch, drop=dropout, sgd=optimizer, losses=losses)
        optimizer.step_schedules()
        return losses.get("paraphrase_spans", 0.0)

    step(groups[0])  # warm-up step
    mem_before = memory_now()
    losses: list = []
    _, wall, cpu = _maybe_profile(args.profile_out, lambda: losses.extend(step(b) for b in groups))
    return _train_result(
        pairs, args.batch_size, wall, cpu, mem_load, mem_before, losses,
        {"load_seconds": load_s, "threads_used": torch.get_num_threads()},
    )


def worker_prepare(args):
    """Environment facts and, when --data is given, the ContextDeP pairs (in a
    worker, so that the parent never imports torch or spaCy)."""
    from importlib.metadata import version

    import spacy
    import torch

    info = {
        "threads_default": torch.get_num_threads(),
        "versions": {
            "python": platform.python_version(),
            **{name: version(name) for name in
               ("torch", "transformers", "tokenizers", "spacy", "spacy-transformers", "thinc", "numpy")},
        },
        "model_source": _resolve(args.model),
    }
    if args.data and not args.no_data:
        from spacy_paraphrase.converters.contextdep import convert_contextdep

        docs, _ = convert_contextdep(args.data, spacy.blank("en").vocab, mode="majority")
        pairs = []
        for doc in docs:
            first, second = doc.spans["turns"]
            targets = doc.spans["paraphrase"].attrs["token_targets"]
            # Whitespace tokens stand for ContextDeP's empty words.
            words = [("" if t.is_space else t.text) for t in doc]
            pairs.append({
                "id": doc.spans["turns"].attrs.get("id"),
                "first": words[first.start : first.end],
                "second": words[second.start : second.end],
                "targets_first": [float(x) for x in targets[first.start : first.end]],
                "targets_second": [float(x) for x in targets[second.start : second.end]],
            })
        info["pairs"] = pairs
    return info


WORKERS = {
    ("backbone", "infer"): worker_infer_backbone,
    ("hf", "infer"): worker_infer_hf,
    ("pipeline", "infer"): worker_infer_pipeline,
    ("hf", "train"): worker_train_hf,
    ("pipeline", "train"): worker_train_pipeline,
}


def run_worker(args) -> int:
    if args.worker == "prepare":
        result = worker_prepare(args)
    else:
        with open(args.pairs, encoding="utf-8") as f:
            pairs = json.load(f)
        result = WORKERS[(args.worker, args.task)](args, pairs)
        result["system"] = args.worker
        result["task"] = args.task
    with open(args.result, "w", encoding="utf-8") as f:
        json.dump(result, f)
    return 0


# --------------------------------------------------------------------------- #
# Parent
# --------------------------------------------------------------------------- #


class Runner:
    def __init__(self, args, tmpdir: Path):
        self.args = args
        self.tmpdir = tmpdir
        self.count = 0
        self.source: Optional[str] = None

    def call(self, worker: str, task: str = "", pairs: Optional[List[dict]] = None,
             batch_size: int = 1, extra: Optional[List[str]] = None) -> dict:
        self.count += 1
        result = self.tmpdir / f"result_{self.count}.json"
        cmd = [sys.executable, "-m", MODULE, "--worker", worker, "--result", str(result),
               "--model", self.args.model, "--config", str(self.args.config),
               "--threads", str(self.args.threads or 0), "--seed", str(self.args.seed),
               "--batch-size", str(batch_size), "--repeats", str(self.args.repeats)]
        if self.source:
            cmd += ["--source", self.source]
        if task:
            cmd += ["--task", task]
        if pairs is not None:
            pairs_file = self.tmpdir / f"pairs_{self.count}.json"
            pairs_file.write_text(json.dumps(pairs), encoding="utf-8")
            cmd += ["--pairs", str(pairs_file)]
        cmd += extra or []
        label = f"{worker} {task}".strip()
        print(f"  [{self.count}] {label} (batch {batch_size}, {len(pairs or [])} pairs) ...",
              end="", flush=True, file=sys.stderr)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=str(REPO), capture_output=True, text=True,
                              timeout=self.args.worker_timeout)
        if proc.returncode != 0 or not result.exists():
            print(" FAILED", file=sys.stderr)
            raise RuntimeError(
                f"Worker {label} failed (exit {proc.returncode}).\nstdout:\n{proc.stdout[-4000:]}\n"
                f"stderr:\n{proc.stderr[-8000:]}"
            )
        print(f" {time.perf_counter() - t0:.1f}s", file=sys.stderr)
        out = json.loads(result.read_text(encoding="utf-8"))
        out["process_seconds"] = time.perf_counter() - t0
        return out


def _ratio(a, b):
    return a / b if a and b else None


def _scale_pairs(length: int, n: int, seed: int) -> List[dict]:
    first = max(1, round(length * FIRST_SHARE))
    return generate_pairs(n, seed, first_len=first, second_len=max(1, length - first))


def _check_memory_readings(results: List[dict]) -> List[str]:
    notes = []
    for r in results:
        a, b = r.get("peak_rss_mb"), r.get("peak_hwm_mb")
        if a and b and abs(a - b) > 0.05 * b + 5:
            notes.append(
                f"{r['system']} {r['task']}: ru_maxrss {a:.0f} MiB differs from VmHWM {b:.0f} MiB "
                "(ru_maxrss may include the parent's peak)."
            )
    return notes


def main_parent(args) -> int:
    t_start = time.perf_counter()
    if args.quick:
        args.repeats = args.repeats or 1
        args.n_pairs = args.n_pairs or 16
        args.train_pairs = args.train_pairs or 16
        args.scale_lengths = args.scale_lengths or "32,96"
        args.scale_batch_sizes = args.scale_batch_sizes or "1,4"
        args.scale_pairs = args.scale_pairs or 8
    args.repeats = args.repeats or 3
    args.scale_lengths = args.scale_lengths or "32,128,384"
    args.scale_batch_sizes = args.scale_batch_sizes or "1,8,32"
    parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    unknown = parts - {"infer", "train", "scale"}
    if unknown:
        raise SystemExit(f"Unknown --parts: {sorted(unknown)}")
    data_path = None if args.no_data else Path(args.data)
    if data_path is not None and not data_path.exists():
        print(f"Data file {data_path} not found: using generated pairs.", file=sys.stderr)
        data_path = None
    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    load_start = os.getloadavg()

    with tempfile.TemporaryDirectory(prefix="run_speed_") as tmp:
        runner = Runner(args, Path(tmp))
        print("Preparing (environment, data) ...", file=sys.stderr)
        prep = runner.call("prepare", extra=(["--data", str(data_path)] if data_path else ["--no-data"]))
        if not args.threads:
            args.threads = prep["threads_default"]
        runner.source = prep["model_source"]
        if data_path is not None:
            pairs = prep["pairs"]
            source = f"ContextDeP dev ({data_path})"
        else:
            pairs = generate_pairs(args.n_pairs or 88, args.seed)
            source = f"generated (seed {args.seed}, first turn ~{GEN_FIRST_MEAN} words, second ~{GEN_SECOND_MEAN})"
        if args.n_pairs:
            pairs = pairs[: args.n_pairs]
        if args.sort_by_length:
            pairs = sorted(pairs, key=lambda p: -(len(p["first"]) + len(p["second"])))
        train_pairs = pairs[: args.train_pairs] if args.train_pairs else pairs
        B = args.batch_size

        results: dict = {
            "command": f"python -m {MODULE} " + shlex.join(sys.argv[1:]),
            "cwd": os.getcwd(),
            "created": datetime.datetime.now().isoformat(timespec="seconds"),
            "machine": {
                "platform": platform.platform(),
                "processor": platform.processor() or platform.machine(),
                "cpu_count": os.cpu_count(),
                "load_average_at_start": load_start,
            },
            "versions": prep["versions"],
            "settings": {
                "model": args.model,
                "model_source": prep["model_source"],
                "config": str(args.config),
                "torch_threads": args.threads,
                "batch_size": B,
                "order": "sorted by length (descending) in all systems" if args.sort_by_length
                else "corpus order (no sorting) in all systems",
                "inference_repeats": args.repeats,
                "quick": bool(args.quick),
                "seed": args.seed,
            },
            "data": {
                "source": source,
                "n_pairs": len(pairs),
                "n_words": n_words(pairs),
                "mean_words_first": sum(len(p["first"]) for p in pairs) / len(pairs),
                "mean_words_second": sum(len(p["second"]) for p in pairs) / len(pairs),
                "n_train_examples": len(train_pairs),
            },
            "inference": {},
            "training": {},
            "scaling": [],
            "ratios": {},
        }

        if "infer" in parts:
            print(f"Inference: {len(pairs)} pairs, batch {B}", file=sys.stderr)
            for system in INFER_SYSTEMS:
                results["inference"][system] = runner.call(system, "infer", pairs, B)
        if "train" in parts:
            print(f"Training: {len(train_pairs)} examples, batch {B}", file=sys.stderr)
            for system in TRAIN_SYSTEMS:
                results["training"][system] = runner.call(system, "train", train_pairs, B)
        if "scale" in parts:
            lengths = [int(x) for x in args.scale_lengths.split(",")]
            sizes = [int(x) for x in args.scale_batch_sizes.split(",")]
            n_scale = args.scale_pairs or 64
            print(f"Scaling: lengths {lengths} x batch sizes {sizes}, {n_scale} pairs each",
                  file=sys.stderr)
            for length in lengths:
                scale_pairs = _scale_pairs(length, n_scale, args.seed + length)
                for size in sizes:
                    for system in SCALE_SYSTEMS:
                        r = runner.call(system, "infer", scale_pairs, size)
                        r["length"] = length
                        results["scaling"].append(r)
        if args.profile:
            stem = output.with_suffix("")
            for system, task, group in (("pipeline", "infer", pairs), ("hf", "infer", pairs),
                                        ("pipeline", "train", train_pairs), ("hf", "train", train_pairs)):
                if task not in parts:
                    continue
                prof = Path(f"{stem}_profile_{system}_{task}.prof")
                runner.call(system, task, group, B, extra=["--profile-out", str(prof)])
                write_profile_text(prof)

    inf, trn = results["inference"], results["training"]
    ratios = results["ratios"]
    if inf:
        ratios["infer_throughput_c_over_a"] = _ratio(inf["pipeline"]["pairs_per_s"], inf["backbone"]["pairs_per_s"])
        ratios["infer_throughput_c_over_b"] = _ratio(inf["pipeline"]["pairs_per_s"], inf["hf"]["pairs_per_s"])
        ratios["infer_peak_rss_c_over_b"] = _ratio(inf["pipeline"]["peak_rss_mb"], inf["hf"]["peak_rss_mb"])
        ratios["infer_run_rss_growth_c_over_b"] = _ratio(
            inf["pipeline"]["peak_rss_mb"] - inf["pipeline"]["rss_after_load_mb"],
            inf["hf"]["peak_rss_mb"] - inf["hf"]["rss_after_load_mb"],
        )
    if trn:
        ratios["train_epoch_seconds_c_over_b"] = _ratio(
            trn["pipeline"]["seconds_per_epoch"], trn["hf"]["seconds_per_epoch"]
        )
        ratios["train_peak_rss_c_over_b"] = _ratio(trn["pipeline"]["peak_rss_mb"], trn["hf"]["peak_rss_mb"])
    all_runs = list(inf.values()) + list(trn.values()) + results["scaling"]
    results["notes"] = _check_memory_readings(all_runs)
    results["machine"]["load_average_at_end"] = os.getloadavg()
    results["total_seconds"] = time.perf_counter() - t_start
    if results["machine"]["load_average_at_start"][0] > 0.5 * (os.cpu_count() or 1):
        results["notes"].append(
            f"The 1-minute load average was {load_start[0]:.2f} on {os.cpu_count()} cores at the "
            "start: other processes competed for the CPU (compare cpu_seconds with seconds). With "
            "more busy threads than cores, torch's OpenMP threads spin-wait and small batches can get "
            "10x slower; rerun on an idle machine (or with --threads 1 to compare systems)."
        )

    output.write_text(json.dumps(results, indent=2), encoding="utf-8")
    md = render_markdown(results)
    output.with_suffix(".md").write_text(md, encoding="utf-8")
    print(md)
    print(f"Wrote {output} and {output.with_suffix('.md')}", file=sys.stderr)
    return 0


def write_profile_text(prof: Path, limit: int = 45) -> None:
    import io
    import pstats

    buf = io.StringIO()
    stats = pstats.Stats(str(prof), stream=buf)
    stats.sort_stats("cumulative").print_stats(limit)
    buf.write("\n\n===== by own time (tottime) =====\n")
    stats.sort_stats("tottime").print_stats(limit)
    prof.with_suffix(".txt").write_text(buf.getvalue(), encoding="utf-8")


def _f(x, digits=1):
    if x is None:
        return "—"
    if isinstance(x, float):
        return f"{x:,.{digits}f}"
    return f"{x:,}"


def render_markdown(r: dict) -> str:
    s, d = r["settings"], r["data"]
    lines = [
        "# spacy-paraphrase speed benchmark",
        "",
        f"Command: `{r['command']}` (in `{r['cwd']}`), {r['created']}",
        "",
        f"- Machine: {r['machine']['platform']}, {r['machine']['cpu_count']} CPUs, "
        f"load average at start {r['machine']['load_average_at_start'][0]:.2f}, "
        f"at end {r['machine']['load_average_at_end'][0]:.2f}",
        "- Versions: " + ", ".join(f"{k} {v}" for k, v in r["versions"].items()),
        f"- Backbone: `{s['model']}` (from `{s['model_source']}`); torch threads {s['torch_threads']} "
        "in every worker; every system in its own fresh subprocess",
        f"- Pairs: {d['source']}: {d['n_pairs']} pairs, {d['n_words']:,} words "
        f"(first turn {d['mean_words_first']:.1f}, second {d['mean_words_second']:.1f} words on average); "
        f"batch size {s['batch_size']}; {s['order']}; one warm-up batch (step) before each timed run, not counted; "
        f"inference: median of {s.get('inference_repeats', 1)} timed run(s) over all pairs",
        "- Memory: RSS in MiB. *load* = RSS after loading the model, *before* = RSS right before the "
        "timed run (after warm-up), *peak* = `ru_maxrss` after the run (whole process)",
        "",
    ]
    inf = r["inference"]
    if inf:
        lines += [
            "## Inference",
            "",
            "| system | pairs/s | words/s | time (s) | CPU (s) | RSS load | RSS before | peak RSS | load (s) | notes |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
        ]
        for name in INFER_SYSTEMS:
            x = inf.get(name)
            if not x:
                continue
            note = ""
            if name == "pipeline":
                note = (f"pair Docs built beforehand in {x['build_docs_seconds']:.3f} s "
                        f"({_f(x['build_docs_per_s'], 0)} pairs/s)")
            elif name == "backbone":
                note = (f"pre-tokenized in {x['prepare_seconds']:.3f} s; {x['n_wordpieces']:,} pieces, "
                        f"{x['n_padded_wordpieces']:,} with padding")
            lines.append(
                f"| {SYSTEM_LABELS[name]} | {_f(x['pairs_per_s'], 2)} | {_f(x['words_per_s'], 0)} | "
                f"{_f(x['seconds'], 2)} | {_f(x['cpu_seconds'], 2)} | {_f(x['rss_after_load_mb'], 0)} | "
                f"{_f(x['rss_before_run_mb'], 0)} | {_f(x['peak_rss_mb'], 0)} | {_f(x['load_seconds'], 1)} | {note} |"
            )
        lines.append("")
    trn = r["training"]
    if trn:
        lines += [
            "## Training (one epoch, evaluation and saving excluded)",
            "",
            "| system | examples | steps | s/epoch | s/step | CPU (s) | RSS load | RSS before | peak RSS | notes |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
        ]
        for name in TRAIN_SYSTEMS:
            x = trn.get(name)
            if not x:
                continue
            note = ""
            if name == "hf":
                note = (f"torch loop, AdamW lr 5e-5, clip 1.0; tokenized once beforehand in "
                        f"{x['prepare_seconds']:.3f} s (not in s/epoch)")
            else:
                note = "`nlp.update(batch, sgd=optimizer)` + `step_schedules()` as in `spacy train`"
            lines.append(
                f"| {SYSTEM_LABELS[name]} | {x['n_examples']} | {x['steps']} | {_f(x['seconds_per_epoch'], 2)} | "
                f"{_f(x['seconds_per_step'], 3)} | {_f(x['cpu_seconds'], 2)} | {_f(x['rss_after_load_mb'], 0)} | "
                f"{_f(x['rss_before_run_mb'], 0)} | {_f(x['peak_rss_mb'], 0)} | {note} |"
            )
        lines.append("")
    ratios = r["ratios"]
    if ratios:
        names = {
            "infer_throughput_c_over_a": "inference throughput c/a (pipeline vs bare forward)",
            "infer_throughput_c_over_b": "inference throughput c/b (pipeline vs plain HF)",
            "infer_peak_rss_c_over_b": "inference peak RSS c/b",
            "infer_run_rss_growth_c_over_b": "inference RSS growth during run (peak − load) c/b",
            "train_epoch_seconds_c_over_b": "training seconds per epoch c/b",
            "train_peak_rss_c_over_b": "training peak RSS c/b",
        }
        lines += ["## Ratios", "", "| ratio | value |", "|---|---:|"]
        for k, v in ratios.items():
            lines.append(f"| {names.get(k, k)} | {_f(v, 2)} |")
        lines.append("")
    sc = r["scaling"]
    if sc:
        by_point: Dict[tuple, Dict[str, dict]] = {}
        for x in sc:
            by_point.setdefault((x["length"], x["batch_size"]), {})[x["system"]] = x
        lines += [
            "## Scaling (inference, generated pairs of fixed length)",
            "",
            f"{sc[0]['n_pairs']} pairs per point. Peak − before = RSS growth during the timed run.",
            "",
            "| words/pair | batch | (b) pairs/s | (c) pairs/s | c/b | (b) words/s | (c) words/s "
            "| (b) peak RSS | (c) peak RSS | (b) peak − before | (c) peak − before |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for (length, size), point in by_point.items():
            b, c = point.get("hf", {}), point.get("pipeline", {})

            def g(x, key, digits):
                return _f(x.get(key), digits)

            def grow(x):
                return _f(x["peak_rss_mb"] - x["rss_before_run_mb"], 0) if x else "—"

            lines.append(
                f"| {length} | {size} | {g(b, 'pairs_per_s', 2)} | {g(c, 'pairs_per_s', 2)} | "
                f"{_f(_ratio(c.get('pairs_per_s'), b.get('pairs_per_s')), 2)} | {g(b, 'words_per_s', 0)} | "
                f"{g(c, 'words_per_s', 0)} | {g(b, 'peak_rss_mb', 0)} | {g(c, 'peak_rss_mb', 0)} | "
                f"{grow(b)} | {grow(c)} |"
            )
        lines.append("")
    if r.get("notes"):
        lines += ["## Notes", ""] + [f"- {n}" for n in r["notes"]] + [""]
    lines.append(f"Total benchmark time {r['total_seconds']:.0f} s.")
    return "\n".join(lines) + "\n"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default=DEFAULT_MODEL,
                   help="backbone: a Hugging Face name or local directory (default: the offline "
                   "all-MiniLM-L6-v2, resolved by spacy_paraphrase.backbones)")
    p.add_argument("--config", default=str(DEFAULT_CONFIG), help="pipeline config for (c)")
    p.add_argument("--data", default=str(DEFAULT_DATA),
                   help="ContextDeP TSV (default: ../shared/data/contextdep/dev.tsv from the repo root); "
                   "generated pairs when missing")
    p.add_argument("--no-data", action="store_true", help="use generated pairs even when --data exists")
    p.add_argument("--n-pairs", type=int, default=0, help="use the first N pairs (0 = all; generated: 88)")
    p.add_argument("--train-pairs", type=int, default=0, help="examples per training epoch (0 = all pairs)")
    p.add_argument("--batch-size", type=int, default=8, help="batch size of every system (default 8, as the config)")
    p.add_argument("--sort-by-length", action="store_true",
                   help="sort the pairs by length (descending) for all systems; default: corpus order")
    p.add_argument("--threads", type=int, default=0,
                   help="torch threads in every worker (default: torch.get_num_threads() in this environment)")
    p.add_argument("--parts", default="infer,train,scale", help="comma-separated subset of infer,train,scale")
    p.add_argument("--scale-lengths", default="", help="words per pair for scaling (default 32,128,384)")
    p.add_argument("--scale-batch-sizes", default="", help="batch sizes for scaling (default 1,8,32)")
    p.add_argument("--scale-pairs", type=int, default=0, help="pairs per scaling point (default 64)")
    p.add_argument("--repeats", type=int, default=0,
                   help="timed inference runs over all pairs per worker; the median is reported (default 3; "
                   "--quick: 1)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true",
                   help="tiny sizes for tests: 16 pairs, 2 training steps, scaling 32,96 words x batch 1,4 on 8 pairs")
    p.add_argument("--profile", action="store_true",
                   help="also run cProfile'd workers ((b) and (c), inference and training) after the timed ones; "
                   "writes OUTPUT_profile_*.prof and .txt")
    p.add_argument("--output", default=str(DEFAULT_OUTPUT), help="JSON results; the markdown goes next to it (.md)")
    p.add_argument("--worker-timeout", type=int, default=3600, help="seconds per worker process")
    # Worker-only arguments.
    p.add_argument("--worker", choices=("prepare",) + INFER_SYSTEMS, help=argparse.SUPPRESS)
    p.add_argument("--task", choices=("infer", "train"), help=argparse.SUPPRESS)
    p.add_argument("--pairs", help=argparse.SUPPRESS)
    p.add_argument("--source", help=argparse.SUPPRESS)
    p.add_argument("--result", help=argparse.SUPPRESS)
    p.add_argument("--profile-out", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.worker:
        return run_worker(args)
    return main_parent(args)


if __name__ == "__main__":
    sys.exit(main())
