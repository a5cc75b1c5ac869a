#!/usr/bin/env python
"""Inference speed of trained pipelines on other backbones, in one run.

Loads each ``NAME=MODEL_DIR`` pipeline once and, on the same pairs (the pair
Docs of DATA.spacy, ``--limit`` first ones), times ``nlp.pipe(docs,
batch_size=B)``: one untimed warm-up each, then ``--repeats`` rounds timing
every pipeline, the order rotated each round; the median of the rounds, in
pairs per wall second and per CPU second of the process (``run_quantize``'s
timing). Ratios are against the first pipeline. Each pipeline's backbone is
read from its ``meta.json`` (``spacy_paraphrase.backbone``, where recorded);
``train_seconds.json`` beside a model directory (written by
``run_compare_modes``) is reported as its training time. The JSON names no
machine paths. Run from the repository root::

    python -m studies.run_backbone_speed minilm=training/modes/soft_tm_seed5/model-tuned-turn_max \\
        mpnet=training/mpnet/soft_mpnet_seed5/model-tuned corpus/contextdep/dev.spacy \\
        --threads 1 --output studies/results/backbone_speed_contextdep.json
"""
import argparse
import datetime
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Dict, List, Tuple

from .run_quantize import add_timing_args, measure_speed, read_examples, versions, write_json
from benchmarks.run_speed import portable
from benchmarks.speed_measure import ratio

MODULE = "studies.run_backbone_speed"


def parse_models(items: List[str]) -> List[Tuple[str, Path]]:
    """``NAME=DIR`` items as (name, path); names unique."""
    out = []
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise SystemExit(f"Expected NAME=MODEL_DIR, got {item!r}")
        if name in {n for n, _ in out}:
            raise SystemExit(f"Pipeline name {name!r} given twice")
        out.append((name, Path(path)))
    if len(out) < 2:
        raise SystemExit("Give at least two NAME=MODEL_DIR pipelines to compare.")
    return out


def portable_arg(arg: str) -> str:
    """A command-line argument (``NAME=DIR`` or a path) without machine paths."""
    name, sep, value = arg.partition("=")
    if sep and os.path.isabs(value):
        return f"{name}={portable(value)}"
    return portable(arg) if os.path.isabs(arg) else arg


def train_seconds(model: Path):
    timing = model.parent / "train_seconds.json"
    return json.loads(timing.read_text()) if timing.is_file() else None


def run(args) -> Dict:
    import spacy
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    models = parse_models(args.models)
    names = tuple(name for name, _ in models)
    nlps = {name: spacy.load(path) for name, path in models}
    examples = {name: read_examples(nlps[name], Path(args.data), args.limit) for name in names}
    docs = {name: [eg.predicted for eg in examples[name]] for name in names}
    load_start = os.getloadavg()
    speed = measure_speed(docs, nlps, args.batch_size, args.repeats, systems=names)["speed"]
    first = names[0]
    pipelines = {}
    for name, path in models:
        record = (nlps[name].meta.get("spacy_paraphrase") or {}).get("backbone") or {}
        pipelines[name] = {
            "model": portable(path.resolve()),
            "backbone": {k: record.get(k) for k in ("name", "source", "sha256") if k in record},
            "train": train_seconds(path),
            **speed[name],
            f"speed_over_{first}": ratio(speed[name]["pairs_per_s"], speed[first]["pairs_per_s"]),
            f"cpu_speed_over_{first}": ratio(speed[name]["pairs_per_cpu_s"], speed[first]["pairs_per_cpu_s"]),
        }
    return {
        "command": f"python -m {MODULE} " + shlex.join(portable_arg(a) for a in args.argv),
        "created": datetime.datetime.now().isoformat(timespec="seconds"),
        "settings": {"data": portable(Path(args.data).resolve()), "batch_size": args.batch_size,
                     "repeats": args.repeats, "torch_threads": torch.get_num_threads()},
        "machine": {"cpu_count": os.cpu_count(), "load_average_at_start": load_start,
                    "load_average_at_end": os.getloadavg()},
        "versions": versions(),
        "n_pairs": len(docs[first]),
        "pipelines": pipelines,
    }


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("models", nargs="+", help="NAME=MODEL_DIR (two or more; ratios against the first)")
    p.add_argument("data", help=".spacy file of reference pair Docs")
    p.add_argument("--output", required=True)
    add_timing_args(p, 3, "timed rounds (every pipeline each)")
    args = p.parse_args(argv)
    args.argv = list(argv) if argv is not None else sys.argv[1:]
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    results = run(args)
    output = write_json(results, args.output)
    first = next(iter(results["pipelines"]))
    for name, r in results["pipelines"].items():
        print(f"{name}: {r['pairs_per_s']:.1f} pairs/s, {r['pairs_per_cpu_s']:.1f} per CPU s "
              f"({r[f'cpu_speed_over_{first}']:.2f}x {first} per CPU s)", file=sys.stderr)
    print(f"Wrote {output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
