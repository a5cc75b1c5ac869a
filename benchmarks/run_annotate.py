#!/usr/bin/env python
"""Throughput and memory of ``annotate`` (docs/annotate.md).

(1) throughput: ``run_local`` (read the corpus, validate, build pair Docs,
    ``nlp.pipe``, build and write the records, checkpoint after every buffer)
    against a bare ``nlp.pipe`` over the same pairs, held in memory, with the
    pair Docs built inside the timed loop (what a hand-written loop does) by
    a freshly loaded pipeline (loading not timed), as annotate's;
    same model, same batch size, ``--threads`` torch threads (default 1).
    Each measure runs in a fresh process of its own (annotate sets the C
    heap's policy for the whole process: ``--heap``, one annotate run per
    policy listed), ``--repeats`` rounds, the order turned by one place every
    round. Rates per CPU second of the process (model loading subtracted) and
    per wall second (annotate's own clock, ``Summary.seconds``); the CPU rates
    are the measure on a shared machine, where the wall rates move with the
    other jobs. Target: median annotate / median bare >= 0.95.
(2) memory: peak RSS of a whole ``python -m spacy_paraphrase annotate`` run
    at 10,000 and 100,000 pairs, each in its own subprocess, read by a tiny
    launcher as ``getrusage(RUSAGE_CHILDREN).ru_maxrss`` (the parent and the
    launcher import neither spaCy nor torch: a child's ``ru_maxrss`` starts
    at its parent's peak). Target: at most 50 MB more at 100,000 pairs.

Model (``--model``): ``tiny``, the tests' tiny model (``tests.util``: a random
2-layer BERT of width 32 with the offline backbone's tokenizer, transformer +
paraphrase_spans, trained 10 steps on four pairs), the cheapest model, so
annotate's own overhead weighs most; ``default``, the default pipeline
(``configs/contextdep_minilm_cpu.cfg``: the offline MiniLM backbone, initialized,
not trained: the same work per pair as a trained ``model-tuned``); or a
pipeline's folder. Pairs (``--format``): MediaSum-style interviews (11
utterances per conversation, GUEST and HOST alternating; consecutive pairing),
or chat JSON Lines (one user / assistant exchange per conversation). For (1) the
utterance texts are drawn from ContextDeP's guest and host turns
(``--data``, default ``../shared/data/contextdep/train.tsv``), else from
``speed_pairs.generate_pairs`` (ContextDeP-like lengths: first turn ~90 ± 30
words, second ~35 ± 15); for (2) they are short (3-8 words from a small
vocabulary), so that 100,000 pairs fit in a few minutes: the memory that
could grow with the corpus is the job's bookkeeping, not the model's.

Run from the repository root::

    python -m benchmarks.run_annotate                  # results/annotate.json and .md
    python -m benchmarks.run_annotate --part throughput   # remeasure (1), keep (2) from the JSON
    python -m benchmarks.run_annotate --pairs 60 --rss-sizes 200 400 --output /tmp/a.json   # smoke run
    python -m benchmarks.run_annotate --part throughput --model default --format chat --pairs 601 \
        --output benchmarks/results/annotate_default_chat.json   # the default pipeline, chat pairs
"""
import argparse
import csv
import datetime
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from .speed_pairs import generate_pairs

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "contextdep" / "train.tsv"
DEFAULT_OUTPUT = REPO / "benchmarks" / "results" / "annotate.json"
MODULE = "benchmarks.run_annotate"
UTTERANCES = 11  # per conversation: 10 consecutive pairs
DEFAULT_CONFIG = "contextdep_minilm_cpu.cfg"  # the default pipeline's config
MODELS = {
    "tiny": "the tests' tiny model (random 2-layer BERT, width 32, trained 10 steps)",
    "default": f"the default pipeline (configs/{DEFAULT_CONFIG}: offline MiniLM backbone, initialized, not trained)",
}
SHORT_WORDS = "the a we you they won lost game weather was awful terrible indeed have been doing this it".split()
LAUNCHER = (
    "import json, resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "print(json.dumps({'rc': rc, 'peak_kib': peak, 'wall_s': time.perf_counter() - t}))\n"
)


def turn_pools(data: Path) -> Tuple[List[str], List[str], str]:
    """(guest texts, host texts, where from) for the throughput corpus."""
    if data.exists():
        with open(data, encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
        guests = sorted({r["Guest Tokens"] for r in rows if (r.get("Guest Tokens") or "").strip()})
        hosts = sorted({r["Host Tokens"] for r in rows if (r.get("Host Tokens") or "").strip()})
        return guests, hosts, f"ContextDeP {data.name}: {len(guests)} guest and {len(hosts)} host turns"
    pairs = generate_pairs(400, seed=0)
    return ([" ".join(p["first"]) for p in pairs], [" ".join(p["second"]) for p in pairs],
            "generated (speed_pairs.generate_pairs: first turn ~90 ± 30 words, second ~35 ± 15)")


def short_pools(seed: int = 0) -> Tuple[List[str], List[str]]:
    rng = random.Random(seed)
    texts = [" ".join(rng.choice(SHORT_WORDS) for _ in range(rng.randint(3, 8))) for _ in range(500)]
    return texts[:250], texts[250:]


def write_chats(path: Path, n_pairs: int, guests: Sequence[str], hosts: Sequence[str], seed: int) -> int:
    """A chat JSON Lines file of ``n_pairs`` conversations, one user / assistant exchange each."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as f:
        for k in range(n_pairs):
            messages = [{"role": "user", "content": rng.choice(guests)},
                        {"role": "assistant", "content": rng.choice(hosts)}]
            f.write(json.dumps({"id": f"BENCH-{k}", "messages": messages}) + "\n")
    return n_pairs


def write_interviews(path: Path, n_pairs: int, guests: Sequence[str], hosts: Sequence[str], seed: int) -> int:
    """A MediaSum-style file with exactly ``n_pairs`` consecutive pairs."""
    rng = random.Random(seed)
    left, k = n_pairs, 0
    with open(path, "w", encoding="utf-8") as f:
        while left > 0:
            n = min(UTTERANCES, left + 1)
            speakers = ["GUEST" if i % 2 == 0 else "HOST" for i in range(n)]
            texts = [rng.choice(guests if s == "GUEST" else hosts) for s in speakers]
            f.write(json.dumps({"id": f"BENCH-{k}", "utt": texts, "speaker": speakers}) + "\n")
            left -= n - 1
            k += 1
    return n_pairs


# ---------------------------------------------------------------- workers


def worker_model(path: str, kind: str = "tiny") -> Dict:
    if kind == "default":
        import spacy
        from thinc.api import Config

        config = Config().from_disk(REPO / "configs" / DEFAULT_CONFIG)
        nlp = spacy.util.load_model_from_config(config, auto_fill=True)
        nlp.initialize()
        nlp.to_disk(path)
        return {"path": path}
    from thinc.api import Adam, fix_random_seed

    from tests.util import make_examples, make_nlp, make_tiny_bert

    bert = make_tiny_bert(Path(path).parent / "tiny_bert")
    fix_random_seed(0)
    nlp = make_nlp(str(bert))
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    optimizer = Adam(1e-3)
    for _ in range(10):
        nlp.update(examples, sgd=optimizer)
    nlp.to_disk(path)
    return {"path": path}


def worker_throughput(model: str, corpus: str, batch_size: int, mode: str, threads: int,
                      fmt: str = "mediasum") -> Dict:
    """One measure in a process of its own (the heap policy annotate sets is
    the process's from then on): ``bare`` (``nlp.pipe``) or ``annotate`` with
    the heap policy ``lean`` or ``fast`` (mode ``annotate-lean``, ...)."""
    import spacy
    import torch

    from spacy_paraphrase import make_pair_doc
    from spacy_paraphrase.annotate.local import run_local
    from spacy_paraphrase.dialogs import DialogCorpus, SourceOptions, read_turn_pairs

    torch.set_num_threads(threads)
    source = SourceOptions(fmt=fmt)
    t = time.perf_counter()
    spacy.load(model)  # imports, and the file in the page cache
    load_s = time.perf_counter() - t
    c = time.process_time()  # a second load, as run_local's (the first one also imports)
    nlp = spacy.load(model)
    load_cpu = time.process_time() - c
    pairs = [(p.first.text, p.second.text, (p.first.speaker, p.second.speaker), p.pair_id)
             for p in read_turn_pairs(corpus, fmt)]
    t = time.perf_counter()
    DialogCorpus(corpus, source).count()
    count_s = time.perf_counter() - t
    if mode == "bare":
        # a freshly loaded pipeline, as run_local's: the same cold vocab and tokenizer cache
        t, c = time.perf_counter(), time.process_time()
        docs = (make_pair_doc(nlp, a, b, speakers=s, pair_id=i) for a, b, s, i in pairs)
        n = sum(1 for _ in nlp.pipe(docs, batch_size=batch_size))
        wall, cpu = time.perf_counter() - t, time.process_time() - c
    else:
        del nlp
        out = Path(corpus).with_suffix(f".{mode}.jsonl")
        c = time.process_time()
        summary = run_local(model, corpus, out, source=source, batch_size=batch_size, count=False,
                            overwrite=True, progress_bar=False, heap=mode.split("-", 1)[1])
        # CPU seconds of the run less those of loading the model (measured above)
        n, wall, cpu = summary.written, summary.seconds, time.process_time() - c - load_cpu
    assert n == len(pairs)
    return {"mode": mode, "pairs": n, "words": sum(len(a.split()) + len(b.split()) for a, b, _, _ in pairs),
            "wall": n / wall, "cpu": n / cpu, "load_seconds": load_s, "load_cpu_seconds": load_cpu,
            "count_pass_seconds": count_s, "torch_threads": torch.get_num_threads()}


def measure_throughput(model: str, corpus: Path, batch_size: int, repeats: int, threads: int, fmt: str,
                       heaps: Sequence[str]) -> Dict:
    """``repeats`` rounds of bare and annotate (one run per heap policy),
    each in a fresh process, the order turned by one place every round (so
    that whatever drifts over a round falls on each alike)."""
    import statistics

    modes = ["bare"] + [f"annotate-{heap}" for heap in heaps]
    rates: Dict[str, Dict[str, List[float]]] = {m: {"wall": [], "cpu": []} for m in modes}
    last: Dict = {}
    for repeat in range(repeats):
        turn = repeat % len(modes)
        for mode in modes[turn:] + modes[:turn]:
            last = run_worker("throughput", model, str(corpus), str(batch_size), mode, str(threads), fmt)
            for key in ("wall", "cpu"):
                rates[mode][key].append(last[key])
    names = {"bare": "bare", f"annotate-{heaps[0]}": "annotate"}
    names.update({f"annotate-{h}": f"annotate_{h}" for h in heaps[1:]})
    runs = {f"{names[m]}_{k}": v for m, by in rates.items() for k, v in by.items()}
    median = {k: statistics.median(v) for k, v in runs.items()}
    result = {
        "pairs": last["pairs"], "words": last["words"], "batch_size": batch_size, "repeats": repeats,
        "heaps": list(heaps), "torch_threads": last["torch_threads"], "load_seconds": last["load_seconds"],
        "load_cpu_seconds": last["load_cpu_seconds"], "count_pass_seconds": last["count_pass_seconds"],
        "pairs_per_s": runs, "median_pairs_per_s": median,
    }
    for name in (names[m] for m in modes[1:]):
        suffix = name[len("annotate"):]
        result[f"ratio_cpu_per_repeat{suffix}"] = [a / b for a, b in zip(runs[f"{name}_cpu"], runs["bare_cpu"])]
        result[f"ratio_wall_per_repeat{suffix}"] = [a / b for a, b in zip(runs[f"{name}_wall"], runs["bare_wall"])]
        result[f"ratio_cpu{suffix}"] = median[f"{name}_cpu"] / median["bare_cpu"]
        result[f"ratio_wall{suffix}"] = median[f"{name}_wall"] / median["bare_wall"]
        result[f"ratio_wall_best{suffix}"] = max(runs[f"{name}_wall"]) / max(runs["bare_wall"])
    return result


def run_worker(kind: str, *args: str) -> Dict:
    command = [sys.executable, "-m", MODULE, "--worker", kind, *args]
    with tempfile.NamedTemporaryFile("r", suffix=".json") as result:
        subprocess.run(command + ["--result", result.name], cwd=REPO, check=True)
        return json.load(open(result.name))


def measure_rss(model: str, corpus: Path, batch_size: int) -> Dict:
    out = corpus.with_suffix(".records.jsonl")
    command = [sys.executable, "-m", "spacy_paraphrase", "annotate", model, str(corpus), str(out),
               "--format", "mediasum", "--batch-size", str(batch_size), "--no-count", "--overwrite"]
    done = subprocess.run([sys.executable, "-c", LAUNCHER, *command], cwd=REPO, check=True,
                          capture_output=True, text=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["rc"] != 0:
        raise RuntimeError(f"annotate failed (exit {result['rc']})")
    lines = sum(1 for _ in open(out, "rb"))
    from spacy_paraphrase.annotate.resume import checkpoint_path, default_errors_path

    for path in (out, default_errors_path(out), checkpoint_path(out)):
        path.unlink(missing_ok=True)
    return {"records": lines, "peak_rss_mib": result["peak_kib"] / 1024, "wall_seconds": result["wall_s"]}


# ---------------------------------------------------------------- report


def _throughput_lines(t: Dict, target: float) -> List[str]:
    r = t["pairs_per_s"]
    heaps = t.get("heaps", ["lean"])
    names = ["annotate"] + [f"annotate_{h}" for h in heaps[1:]]
    head = "| repeat | bare CPU | bare wall |" + "".join(
        f" {n} ({h}) CPU | ratio (CPU) | wall | ratio (wall) |" for n, h in zip(names, heaps))
    lines = [head, "|" + "---:|" * (head.count("|") - 1)]
    for i in range(t["repeats"]):
        row = f"| {i + 1} | {r['bare_cpu'][i]:.1f} | {r['bare_wall'][i]:.1f} |"
        for name in names:
            suffix = name[len("annotate"):]
            row += (f" {r[name + '_cpu'][i]:.1f} | {t['ratio_cpu_per_repeat' + suffix][i]:.3f} "
                    f"| {r[name + '_wall'][i]:.1f} | {t['ratio_wall_per_repeat' + suffix][i]:.3f} |")
        lines.append(row)
    lines += [
        "",
        "Rates in pairs/s: per CPU second of the process (*CPU*, model loading subtracted) and per wall "
        "second (*wall*: annotate's own clock; on a shared machine the wall rate moves with the other jobs' "
        "load, the CPU rate much less). Each measure ran in a process of its own (annotate's heap policy is "
        "the process's once set), the order turned by one place every repeat.",
        "",
    ]
    for name, heap in zip(names, heaps):
        suffix = name[len("annotate"):]
        verdict = "met" if t["ratio_cpu" + suffix] >= target else "NOT met"
        lines.append(f"- annotate `--heap {heap}` / bare, medians of the CPU rates: **{t['ratio_cpu' + suffix]:.3f}** "
                     f"(target >= {target}: {verdict}); best wall rates: {t['ratio_wall_best' + suffix]:.3f}.")
    lines += ["", f"Model loading ({t['load_seconds']:.1f} s) and the counting pass ({t['count_pass_seconds']:.2f} s) "
                  "are in neither rate."]
    return lines


def write_markdown(results: Dict, path: Path) -> None:
    t, m = results["throughput"], results.get("memory")
    targets = results["targets"]
    lines = [
        "# annotate: throughput and memory",
        "",
        f"Command: `{results['command']}`, {results['date']}",
        "",
        f"- Machine: {results['machine']}, {results['cpus']} CPUs (shared: other jobs ran; load average "
        f"at start {results['load_start']:.1f}, at end {results['load_end']:.1f})",
        f"- Model: {results['model']}; batch size {t['batch_size']}",
        "",
        f"## Throughput (torch threads {t['torch_threads']}; each measure in a process of its own)",
        "",
        f"Pairs: {t['pairs']:,} consecutive pairs ({t['words']:,} words) in {results.get('format', 'mediasum')} "
        f"format, {results['pairs_source']}.",
        "",
    ]
    lines += _throughput_lines(t, targets["throughput_ratio"])
    if m is None:
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return
    lines += [
        "",
        "## Peak RSS of a whole run (own subprocess each)",
        "",
        f"Pairs: {results['memory_pairs_source']}.",
        "",
        "| pairs | records | peak RSS (MiB) | wall (s) |",
        "|---:|---:|---:|---:|",
    ]
    for row in m["runs"]:
        lines.append(f"| {row['pairs']:,} | {row['records']:,} | {row['peak_rss_mib']:.1f} | {row['wall_seconds']:.0f} |")
    if "growth_mib" in m:
        ok = "met" if m["growth_mib"] <= targets["rss_growth_mib"] else "NOT met"
        lines += ["", f"Growth from the smallest to the largest run: **{m['growth_mib']:+.1f} MiB** "
                      f"(target <= {targets['rss_growth_mib']} MB: {ok})."]
    if results.get("memory_command"):
        lines += ["", f"(Memory measured by `{results['memory_command']}`, {results['memory_date']}.)"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--pairs", type=int, default=600, help="throughput pairs")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (throughput)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--model", default="tiny",
                        help="tiny (the default), default (the default pipeline's config), or a pipeline's folder")
    parser.add_argument("--heap", nargs="+", choices=("lean", "fast"), default=["lean"],
                        help="annotate's heap policies measured (the first is 'annotate' in the result)")
    parser.add_argument("--format", dest="fmt", choices=("mediasum", "chat"), default="mediasum",
                        help="the throughput corpus's format (the memory runs are MediaSum-style)")
    parser.add_argument("--rss-sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--part", choices=("all", "throughput", "memory"), default="all",
                        help="measure one part only; the other is kept from an existing --output")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args(argv)
    if args.worker:
        kinds = {"model": worker_model, "throughput": worker_throughput}
        positional = [int(x) if x.isdigit() else x for x in rest]
        Path(args.result).write_text(json.dumps(kinds[args.worker](*positional)))
        return 0
    command = "python -m benchmarks.run_annotate " + " ".join(argv if argv is not None else sys.argv[1:])
    date = datetime.datetime.now().isoformat(timespec="seconds")
    results = json.loads(args.output.read_text()) if args.part != "all" and args.output.exists() else {}
    if args.part == "memory" and "throughput" not in results:
        parser.error("--part memory keeps the throughput from --output, which has none")
    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        if args.model in MODELS:
            model = str(tmp_path / "model")
            run_worker("model", model, args.model)
        elif (Path(args.model) / "config.cfg").is_file():
            model = args.model
        else:
            parser.error(f"--model: {args.model!r} is neither {' nor '.join(MODELS)} nor a pipeline's folder")
        if args.part in ("all", "throughput"):
            guests, hosts, results["pairs_source"] = turn_pools(args.data)
            corpus = tmp_path / "throughput.jsonl"
            (write_chats if args.fmt == "chat" else write_interviews)(corpus, args.pairs, guests, hosts, seed=0)
            results["format"] = args.fmt
            results["throughput"] = measure_throughput(model, corpus, args.batch_size, args.repeats, args.threads,
                                                       args.fmt, args.heap)
        if args.part in ("all", "memory"):
            runs = []
            short_g, short_h = short_pools()
            for n in args.rss_sizes:
                corpus = tmp_path / f"rss_{n}.jsonl"
                write_interviews(corpus, n, short_g, short_h, seed=1)
                runs.append(dict(pairs=n, **measure_rss(model, corpus, args.batch_size)))
                corpus.unlink()
            results["memory"] = {"runs": runs}
            if len(runs) > 1:
                results["memory"]["growth_mib"] = runs[-1]["peak_rss_mib"] - runs[0]["peak_rss_mib"]
            results["memory_pairs_source"] = ("generated short turns (3-8 words), MediaSum-style, "
                                              f"{UTTERANCES} utterances per conversation")
            results["memory_command"], results["memory_date"] = command, date
    results.update({
        "command": command, "date": date, "machine": platform.platform(), "cpus": os.cpu_count(),
        "load_start": load_start, "load_end": os.getloadavg()[0],
        "model": MODELS.get(args.model, f"the pipeline {Path(args.model).name}"),
        "targets": {"throughput_ratio": 0.95, "rss_growth_mib": 50},
    })
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    write_markdown(results, args.output.with_suffix(".md"))
    print(args.output.with_suffix(".md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
