#!/usr/bin/env python
"""Throughput of ``annotate --engine ray`` next to the local engine, on the
same pairs and the same model (docs/ray.md, "Scaling estimate").

Runs, one after the other, in this process:

- ``local``: ``run_local`` with torch at 1 and at ``--threads`` threads;
- ``staging``: the Ray driver's part alone (read, validate, write shards);
- ``ray``: ``run_ray`` on a local Ray cluster of ``--threads`` CPUs with 1
  and with 2 actors (1 CPU and 1 torch thread each), timed from the call to
  the last record written (cluster start excluded; actor start, model load,
  staging and writing included).

The pairs are generated interview-like pairs (``speed_pairs``, ContextDeP's
turn lengths) written as a pair file; the model is ``configs/contextdep_minilm_cpu.cfg``
with an untrained head (MiniLM backbone, offline). Run from the repository
root::

    python -m benchmarks.run_ray                      # writes results/ray.json and ray.md
    python -m benchmarks.run_ray --pairs 20 --output /tmp/ray.json   # smoke run
"""
import argparse
import datetime
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from .speed_pairs import generate_pairs, n_words

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CONFIG = REPO / "configs" / "contextdep_minilm_cpu.cfg"
DEFAULT_OUTPUT = REPO / "benchmarks" / "results" / "ray.json"


def write_pairs(path: Path, n: int, seed: int) -> int:
    """n generated pairs as a pair file (``text1`` / ``text2``); returns the words."""
    pairs = generate_pairs(n, seed)
    with open(path, "w", encoding="utf8") as f:
        for pair in pairs:
            f.write(json.dumps({"id": pair["id"], "text1": " ".join(pair["first"]),
                                "text2": " ".join(pair["second"])}) + "\n")
    return n_words(pairs)


def build_model(path: Path, config: Path) -> float:
    """Save the benchmark pipeline to ``path``; returns seconds to load it back."""
    import spacy

    import spacy_paraphrase  # noqa: F401  (registers the architectures)

    nlp = spacy.util.load_model_from_config(spacy.util.load_config(config), auto_fill=True)
    nlp.initialize()
    nlp.to_disk(path)
    started = time.perf_counter()
    spacy.load(path)
    return time.perf_counter() - started


def timed(fn, output: Optional[Path] = None) -> Dict[str, Any]:
    """Run ``fn`` (returns a Summary): wall time, counts and, given the
    run's OUTPUT (a file or a directory), bytes per record."""
    started = time.perf_counter()
    summary = fn()
    row = {"wall_s": time.perf_counter() - started, "written": summary.written, "consumed": summary.consumed}
    if output is not None and summary.written:
        files = sorted(output.glob("*.jsonl")) if output.is_dir() else [output]
        row["bytes_per_record"] = sum(f.stat().st_size for f in files) / summary.written
    return row


def measure(args, tmp: Path) -> Dict[str, Any]:
    import torch

    from spacy_paraphrase.annotate.local import run_local
    from spacy_paraphrase.dialogs import SourceOptions

    pairs_path = tmp / "pairs.jsonl"
    words = write_pairs(pairs_path, args.pairs, args.seed)
    model = tmp / "model"
    load_s = build_model(model, args.config)
    rows: List[Dict[str, Any]] = []
    common = dict(batch_size=args.batch_size, with_probs=args.with_probs, progress_bar=False)
    for threads in sorted({1, args.threads}):
        torch.set_num_threads(threads)
        out = tmp / f"local-{threads}.jsonl"
        row = timed(lambda: run_local(str(model), pairs_path, out, count=False, **common), out)
        rows.append({"engine": "local", "actors": None, "threads": threads, **row})
    torch.set_num_threads(args.threads)

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # a throwaway local cluster
    import ray

    from spacy_paraphrase.annotate.ray_engine import run_ray, stage
    from spacy_paraphrase.dialogs import DialogCorpus

    row = timed(lambda: stage(DialogCorpus(pairs_path, SourceOptions()), tmp / "staging-only",
                              tmp / "stage.errors.jsonl", shard_rows=args.shard_rows, limit=None, total=None,
                              progress_bar=False))
    row["written"] = sum(len(path.read_text(encoding="utf8").splitlines()) for path in (tmp / "staging-only").glob("*.jsonl"))
    rows.append({"engine": "staging", "actors": None, "threads": 1, **row})  # written = rows staged
    started = time.perf_counter()
    ray.init(num_cpus=args.threads, include_dashboard=False, log_to_driver=False)
    cluster_s = time.perf_counter() - started
    try:
        for actors in (1, 2):
            out = tmp / f"ray-{actors}"
            row = timed(lambda: run_ray(str(model), pairs_path, out, concurrency=actors, num_cpus=1,
                                        shard_rows=args.shard_rows, **common), out)
            rows.append({"engine": "ray", "actors": actors, "threads": 1, **row})
    finally:
        ray.shutdown()
    for row in rows:
        row["pairs_per_s"] = row["consumed"] / row["wall_s"]
    return {"pairs": args.pairs, "words": words, "model_load_s": load_s, "ray_cluster_start_s": cluster_s,
            "rows": rows}


def versions() -> Dict[str, str]:
    from importlib.metadata import version

    return {name: version(name) for name in ("ray", "torch", "spacy", "spacy-transformers", "transformers")}


def markdown(result: Dict[str, Any]) -> str:
    s = result["settings"]
    lines = [
        "# annotate: Ray engine against the local engine",
        "",
        f"Command: `{result['command']}`, {result['date']}",
        "",
        f"- Machine: {result['machine']}, {result['cpus']} CPUs, load average at start "
        f"{result['load_start']:.2f}, at end {result['load_end']:.2f} (shared machine: other jobs ran)",
        "- Versions: " + ", ".join(f"{k} {v}" for k, v in result["versions"].items()),
        f"- Model: {s['model']}; batch size {s['batch_size']}; with_probs {s['with_probs']}; "
        f"shard_rows {s['shard_rows']}",
        f"- Pairs: {result['pairs']} generated pairs, {result['words']:,} words; "
        f"model load (spacy.load, imports done) {result['model_load_s']:.1f} s; "
        f"local Ray cluster start {result['ray_cluster_start_s']:.1f} s (not in the times below)",
        "",
        "| engine | actors | torch threads each | pairs/s | time (s) | records | bytes/record |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in result["rows"]:
        size = f"{row['bytes_per_record']:,.0f}" if "bytes_per_record" in row else "-"
        lines.append(f"| {row['engine']} | {row['actors'] or '-'} | {row['threads']} | "
                     f"{row['pairs_per_s']:.1f} | {row['wall_s']:.1f} | {row['written']} | {size} |")
    lines += ["", "Times are whole runs: model load, (for Ray) staging, actor start and writing included; "
              "`staging` is the Ray driver's part alone (records = rows staged). "
              "See docs/ray.md for what they mean for N machines."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--shard-rows", type=int, default=25)
    parser.add_argument("--threads", type=int, default=2, help="CPUs of the local Ray cluster; local run threads")
    parser.add_argument("--with-probs", action="store_true")
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        measured = measure(args, Path(tmp))
    result = {
        "command": " ".join(["python -m benchmarks.run_ray", *(argv if argv is not None else sys.argv[1:])]),
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "machine": f"{platform.system()} {platform.machine()}",
        "cpus": os.cpu_count(),
        "load_start": load_start,
        "load_end": os.getloadavg()[0],
        "versions": versions(),
        "settings": {"model": f"{args.config.name} (MiniLM, untrained head)",
                     "batch_size": args.batch_size, "with_probs": args.with_probs, "shard_rows": args.shard_rows},
        **measured,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=1) + "\n", encoding="utf8")
    args.output.with_suffix(".md").write_text(markdown(result), encoding="utf8")
    print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
