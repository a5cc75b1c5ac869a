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
        of ``configs/contextdep_minilm_cpu.cfg`` (untrained head); the pair Docs are
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

The measured systems are in ``speed_systems``, the pairs in ``speed_pairs``,
the measuring in ``speed_measure``; this module runs the workers and writes
the JSON, and ``table_speed`` turns it into the markdown tables. Run from the
repository root::

    python -m benchmarks.run_speed                     # full benchmark
    python -m benchmarks.run_speed --quick --no-data   # seconds-scale smoke run
    python -m benchmarks.table_speed benchmarks/results/speed.json   # speed.md beside it
"""
import argparse
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Optional

from .speed_measure import ratio
from .speed_pairs import GEN_FIRST_MEAN, GEN_SECOND_MEAN, generate_pairs, n_words, scale_pairs
from .speed_systems import INFER_SYSTEMS, SCALE_SYSTEMS, TRAIN_SYSTEMS, run_worker

REPO = Path(__file__).resolve().parents[1]

MODULE = "benchmarks.run_speed"  # workers run as `python -m MODULE --worker ...` from REPO
DEFAULT_DATA = REPO.parent / "shared" / "data" / "contextdep" / "dev.tsv"
DEFAULT_CONFIG = REPO / "configs" / "contextdep_minilm_cpu.cfg"


def portable(path) -> str:
    """``path`` as it reads on any machine: relative to the repo (``..`` for data
    beside it), or from site-packages on; results files name no machine paths."""
    p = Path(str(path))
    if not p.is_absolute():
        return str(path)
    if "site-packages" in p.parts:
        return str(Path("<site-packages>", *p.parts[p.parts.index("site-packages") + 1:]))
    return os.path.relpath(p, REPO)


DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_OUTPUT = REPO / "benchmarks" / "results" / "speed.json"


class Runner:
    """Runs each measurement as ``python -m benchmarks.run_speed --worker ...`` in
    a fresh process (pairs in, result JSON out, both through tmpdir)."""

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
            source = f"ContextDeP dev ({portable(data_path)})"
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
            "cwd": portable(os.getcwd()),
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
                "model_source": portable(prep["model_source"]),
                "config": portable(args.config),
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
                fixed_pairs = scale_pairs(length, n_scale, args.seed + length)
                for size in sizes:
                    for system in SCALE_SYSTEMS:
                        r = runner.call(system, "infer", fixed_pairs, size)
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
        ratios["infer_throughput_c_over_a"] = ratio(inf["pipeline"]["pairs_per_s"], inf["backbone"]["pairs_per_s"])
        ratios["infer_throughput_c_over_b"] = ratio(inf["pipeline"]["pairs_per_s"], inf["hf"]["pairs_per_s"])
        ratios["infer_peak_rss_c_over_b"] = ratio(inf["pipeline"]["peak_rss_mb"], inf["hf"]["peak_rss_mb"])
        ratios["infer_run_rss_growth_c_over_b"] = ratio(
            inf["pipeline"]["peak_rss_mb"] - inf["pipeline"]["rss_after_load_mb"],
            inf["hf"]["peak_rss_mb"] - inf["hf"]["rss_after_load_mb"],
        )
    if trn:
        ratios["train_epoch_seconds_c_over_b"] = ratio(
            trn["pipeline"]["seconds_per_epoch"], trn["hf"]["seconds_per_epoch"]
        )
        ratios["train_peak_rss_c_over_b"] = ratio(trn["pipeline"]["peak_rss_mb"], trn["hf"]["peak_rss_mb"])
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
    print(f"Wrote {output}; the tables: python -m benchmarks.table_speed {output}", file=sys.stderr)
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
    p.add_argument("--output", default=str(DEFAULT_OUTPUT), help="JSON results (python -m benchmarks.table_speed OUTPUT writes the markdown next to it, .md)")
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
