#!/usr/bin/env python
"""Int8 against fp32: speed and scores of one trained pipeline both ways.

One process loads MODEL twice, as trained (fp32: ``quantize = ""``) and
quantized (``--setting``: ``int8-token``, what ``python -m spacy_paraphrase
quantize`` writes by default, or ``int8``; its fp32 weights are the same), both from the same directory through
config overrides (the pair transformer's architecture set to its v2, so a v1
pipeline works too); ``--int8-model DIR`` loads the int8 side from a
directory instead, as it is (the way to measure "int8-smooth", whose
calibration the quantize command writes: ``quantize MODEL DIR --method
int8-smooth --calibrate TRAIN.spacy``, then ``--int8-model DIR``). Then, on the same pairs (the pair Docs of
DATA.spacy, ``--limit`` first ones):

speed   ``nlp.pipe(docs, batch_size=B)`` over all pairs, pair Docs copied
        before each run (not timed); one untimed warm-up run of each, then
        ``--repeats`` rounds, each timing both, in alternating order; the
        median of the rounds. Pairs per wall second and per CPU second of
        the process (on a shared machine the CPU rate is the measure), and
        the paired per-round ratios.
scores  the project's evaluator (``evaluate_pipeline``, as the ``evaluate``
        command): for ``paraphrase_spans`` pair accuracy, pair macro-F1 and
        the Jaccard of both turns; for ``pair_classifier`` accuracy,
        macro-F1 and the positive label's F1 where it has one; int8 − fp32
        in points.
outputs how far apart the two are on each pair: the largest and mean
        absolute difference of ``doc.cats`` and of the token probabilities,
        the share of pairs with the same spans.
size    the transformer's state dict as ``torch.save`` writes it, and the RSS
        growth of loading each pipeline (rough: one process).
encoder (unless ``--no-encoder``) the bare Hugging Face encoder on the same
        pairs, tokenized as text pairs and padded per batch beforehand,
        under ``torch.inference_mode()``: torch fp32, torch int8 (the int8
        pipeline's module, quantized by ``--setting``), and ONNX Runtime fp32 and int8 (the
        fp32 module exported with torch's TorchScript exporter, quantized
        by ``onnxruntime.quantization.quantize_dynamic``, QInt8 weights) when
        ``onnxruntime`` and ``onnx`` are installed (they are not
        dependencies: ``pip install onnxruntime onnx``), else recorded as
        skipped. Same threads everywhere; rounds alternate the order; the
        hidden states' difference from torch fp32 on the real tokens.

The speedup is int8 pairs/s over fp32 pairs/s (wall; ``speedup_cpu`` per CPU
second); deltas are int8 − fp32 in points (× 100). The JSON names no machine
paths. Run from the repository root::

    python -m studies.run_quantize training/contextdep_mpnet_cpu/model-best corpus/contextdep/dev.spacy \\
        --output studies/results/quantize/quantize.json
    python -m studies.table_quantize studies/results/quantize/quantize.json   # quantize.md beside it
"""
import argparse
import datetime
import io
import json
import os
import platform
import shlex
import statistics
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from .quantize_encoder import measure_encoder, transformer_modules
from benchmarks.run_speed import portable
from benchmarks.speed_measure import memory_now, ratio

REPO = Path(__file__).resolve().parents[1]
MODULE = "studies.run_quantize"
SYSTEMS = ("fp32", "int8")
# Per component factory: the score keys compared (after "<pipe name>_"), and
# which of them the summary names accuracy / Jaccard first / Jaccard second.
SCORE_KEYS = {
    "paraphrase_spans": ("pair_acc", "pair_macro_f", "jaccard_first", "jaccard_second"),
    "pair_classifier": ("acc", "macro_f", "pos_f"),
}
SUMMARY_KEYS = {
    "accuracy": {"paraphrase_spans": "pair_acc", "pair_classifier": "acc"},
    "jaccard_first": {"paraphrase_spans": "jaccard_first"},
    "jaccard_second": {"paraphrase_spans": "jaccard_second"},
    "pos_f": {"pair_classifier": "pos_f"},
}
CPU_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8")


def cpu_flags() -> List[str]:
    """The CPU features that decide int8 speed (VNNI / AMX), where /proc says."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    present = set(line.split(":", 1)[1].split())
                    return [flag for flag in CPU_FLAGS if flag in present]
    except OSError:
        pass
    return []


def overrides(model_dir: Path, setting: str) -> Dict[str, str]:
    """Config overrides loading ``model_dir`` with ``quantize = setting``."""
    from spacy_paraphrase.quantized_pipeline import quantize_overrides

    out = quantize_overrides(model_dir, setting)
    if not out:
        raise SystemExit(f"No spacy_paraphrase pair transformer in {model_dir / 'config.cfg'}.")
    return out


def state_mb(nlp) -> float:
    import torch

    total = 0
    for module in transformer_modules(nlp):
        buf = io.BytesIO()
        torch.save(module.state_dict(), buf)
        total += buf.tell()
    return total / 2**20


def load_systems(model: Path, int8_model: Optional[Path], setting: str = "int8") -> Dict[str, Dict]:
    """Both pipelines (the int8 side quantized by ``setting``), with what loading each cost."""
    import spacy

    from spacy_paraphrase.encoder.quantize import is_quantized

    out = {}
    for system in SYSTEMS:
        before = memory_now()["rss_mb"]
        t0 = time.perf_counter()
        if system == "int8" and int8_model is not None:
            nlp = spacy.load(int8_model)
        else:
            nlp = spacy.load(model, config=overrides(model, "" if system == "fp32" else setting))
        seconds = time.perf_counter() - t0
        modules = transformer_modules(nlp)
        quantized = [is_quantized(m) for m in modules]
        if quantized != [system == "int8"] * len(modules) or not modules:
            raise SystemExit(f"The {system} pipeline's transformers are not {system}: {quantized}")
        out[system] = {
            "nlp": nlp,
            "load_seconds": seconds,
            "rss_load_growth_mb": (memory_now()["rss_mb"] or 0.0) - (before or 0.0),
            "transformer_state_mb": state_mb(nlp),
        }
    return out


def read_examples(nlp, data: Path, limit: int) -> list:
    from spacy_paraphrase.corpus import PairCorpus

    examples = list(PairCorpus(data)(nlp))
    return examples[:limit] if limit else examples


def time_pipe(nlp, docs, batch_size: int) -> Tuple[list, float, float]:
    """Processed copies of ``docs`` (copied before the clock starts), wall and CPU seconds."""
    copies = [doc.copy() for doc in docs]
    c0, t0 = time.process_time(), time.perf_counter()
    out = list(nlp.pipe(copies, batch_size=batch_size))
    return out, time.perf_counter() - t0, time.process_time() - c0


def measure_speed(docs: Dict[str, list], nlps: Dict[str, object], batch_size: int, repeats: int,
                  systems: Tuple[str, ...] = SYSTEMS) -> Dict:
    """Warm-up, then ``repeats`` rounds timing every system, the order rotated
    each round (two systems: alternating). With fp32 and int8 among them, the
    per-round fp32 / int8 time ratios too."""
    processed = {}
    for system in systems:
        processed[system], _, _ = time_pipe(nlps[system], docs[system], batch_size)
    runs: Dict[str, List[Tuple[float, float]]] = {s: [] for s in systems}
    for k in range(max(1, repeats)):
        order = systems[k % len(systems):] + systems[:k % len(systems)]
        for system in order:
            _, wall, cpu = time_pipe(nlps[system], docs[system], batch_size)
            runs[system].append((wall, cpu))
    n = len(docs[systems[0]])
    speed = {}
    for system in systems:
        walls = [w for w, _ in runs[system]]
        cpus = [c for _, c in runs[system]]
        speed[system] = {
            "pairs_per_s": n / statistics.median(walls),
            "pairs_per_cpu_s": n / statistics.median(cpus),
            "seconds": walls,
            "cpu_seconds": cpus,
        }
    if "fp32" in runs and "int8" in runs:
        speed["speedup_per_round"] = [fw / iw for (fw, _), (iw, _) in zip(runs["fp32"], runs["int8"])]
    return {"speed": speed, "processed": processed}


def output_agreement(a: list, b: list) -> Dict:
    """How far the int8 outputs are from the fp32 ones, pair by pair."""
    import numpy

    cat_diffs, prob_diffs, same_spans = [], [], []
    for x, y in zip(a, b):
        cat_diffs += [abs(x.cats[k] - y.cats.get(k, float("nan"))) for k in x.cats]
        keys = [k for k in x.spans if k != "turns"]
        same_spans.append(all(
            [(s.start, s.end) for s in x.spans[k]] == [(s.start, s.end) for s in y.spans.get(k, [])]
            for k in keys
        ))
        for k in keys:
            if "token_probs" in x.spans[k].attrs and k in y.spans:
                p = numpy.asarray(x.spans[k].attrs["token_probs"], dtype="float64")
                q = numpy.asarray(y.spans[k].attrs.get("token_probs", []), dtype="float64")
                if p.shape == q.shape:
                    keep = ~(numpy.isnan(p) | numpy.isnan(q))
                    prob_diffs += list(numpy.abs(p[keep] - q[keep]))
    def stats(values):
        return {"max": float(max(values)), "mean": float(statistics.mean(values))} if values else None
    return {
        "cats_abs_diff": stats(cat_diffs),
        "token_prob_abs_diff": stats(prob_diffs),
        "same_spans_share": sum(same_spans) / len(same_spans) if same_spans else None,
    }


def compared_keys(nlp) -> List[Tuple[str, str, str]]:
    """(score key, component factory, key after the pipe name) to compare."""
    out = []
    for name in nlp.pipe_names:
        factory = nlp.get_pipe_meta(name).factory
        for key in SCORE_KEYS.get(factory, ()):
            out.append((f"{name}_{key}", factory, key))
    return out


def compare_scores(scores: Dict[str, Dict], keys: List[Tuple[str, str, str]]) -> Dict:
    kept = {s: {k: scores[s].get(k) for k, _, _ in keys if scores[s].get(k) is not None} for s in SYSTEMS}
    deltas = {k: 100.0 * (kept["int8"][k] - kept["fp32"][k])
              for k, _, _ in keys if k in kept["int8"] and k in kept["fp32"]}
    summary = {}
    for label, per_factory in SUMMARY_KEYS.items():
        for key, factory, short in keys:
            if per_factory.get(factory) == short and key in deltas:
                summary[f"delta_{label}_points"] = deltas[key]
                break
    return {"scores": kept, "deltas_points": deltas, "summary": summary}


def run(args) -> Dict:
    import torch

    from spacy_paraphrase.encoder.quantize import saved_quantization

    if args.threads:
        torch.set_num_threads(args.threads)
    load_start = os.getloadavg()
    t_start = time.perf_counter()
    model = Path(args.model)
    int8_model = Path(args.int8_model) if args.int8_model else None
    systems = load_systems(model, int8_model, args.setting)
    nlps = {s: systems[s]["nlp"] for s in SYSTEMS}
    examples = {s: read_examples(nlps[s], Path(args.data), args.limit) for s in SYSTEMS}
    docs = {s: [eg.predicted for eg in examples[s]] for s in SYSTEMS}
    if not docs["fp32"]:
        raise SystemExit(f"No pair Docs in {args.data}.")
    measured = measure_speed(docs, nlps, args.batch_size, args.repeats)
    speed = measured["speed"]

    encoder = None
    if args.encoder:
        encoder = measure_encoder(nlps, docs["fp32"], args.batch_size, args.repeats)

    from spacy_paraphrase.evaluation import evaluate_pipeline

    scores = {s: evaluate_pipeline(nlps[s], read_examples(nlps[s], Path(args.data), args.limit), args.batch_size)
              for s in SYSTEMS}
    compared = compare_scores(scores, compared_keys(nlps["fp32"]))
    n_words = sum(len(doc) for doc in docs["fp32"])
    ratios = {
        "speedup": ratio(speed["int8"]["pairs_per_s"], speed["fp32"]["pairs_per_s"]),
        "speedup_cpu": ratio(speed["int8"]["pairs_per_cpu_s"], speed["fp32"]["pairs_per_cpu_s"]),
        "speedup_median_of_rounds": statistics.median(speed.pop("speedup_per_round")),
        "transformer_state_int8_over_fp32": ratio(systems["int8"]["transformer_state_mb"],
                                                  systems["fp32"]["transformer_state_mb"]),
        **compared["summary"],
    }
    results = {
        "command": f"python -m {MODULE} " + shlex.join(portable(a) if os.path.isabs(a) else a
                                                       for a in (args.argv or [])),
        "created": datetime.datetime.now().isoformat(timespec="seconds"),
        "machine": {
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "cpu_count": os.cpu_count(),
            "cpu_flags": cpu_flags(),
            "load_average_at_start": load_start,
            "load_average_at_end": os.getloadavg(),
        },
        "versions": versions(),
        "settings": {
            "model": portable(model.resolve()),
            "int8_model": portable(int8_model.resolve()) if int8_model else f"MODEL with quantize = \"{args.setting}\"",
            "meta_name": nlps["fp32"].meta.get("name"),
            "data": portable(Path(args.data).resolve()),
            "quantize_setting": saved_quantization(transformer_modules(nlps["int8"])[0].config),
            "batch_size": args.batch_size,
            "repeats": args.repeats,
            "torch_threads": torch.get_num_threads(),
            "quantized_engine": torch.backends.quantized.engine,
        },
        "data": {"n_pairs": len(docs["fp32"]), "n_tokens": n_words},
        "load": {s: {k: v for k, v in systems[s].items() if k != "nlp"} for s in SYSTEMS},
        "speed": speed,
        "scores": compared["scores"],
        "deltas_points": compared["deltas_points"],
        "outputs": output_agreement(measured["processed"]["fp32"], measured["processed"]["int8"]),
        "ratios": ratios,
        "encoder": encoder,
        "notes": [],
        "total_seconds": time.perf_counter() - t_start,
    }
    if load_start[0] > 0.5 * (os.cpu_count() or 1):
        results["notes"].append(
            f"The 1-minute load average was {load_start[0]:.2f} on {os.cpu_count()} cores at the start: "
            "other processes competed for the CPU; compare the per-CPU-second rates (with more busy "
            "threads than cores torch's threads spin-wait: rerun on an idle machine or with --threads 1)."
        )
    return results


def versions() -> Dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for name in ("torch", "transformers", "spacy", "spacy-transformers", "thinc"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def add_timing_args(p: argparse.ArgumentParser, repeats: int, rounds_help: str) -> None:
    """The options of ``measure_speed`` runs: batch size, rounds, threads, pairs."""
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--repeats", type=int, default=repeats, help=rounds_help)
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    p.add_argument("--limit", type=int, default=0, help="use the first N pairs (0: all)")


def write_json(results: Dict, output: str) -> Path:
    """``results`` as indented JSON at ``output`` (folders made); returns the path."""
    path = Path(output)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return path


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="trained pipeline directory (fp32 weights)")
    p.add_argument("data", help=".spacy file of reference pair Docs")
    p.add_argument("--int8-model", default=None,
                   help="load the int8 side from this directory (e.g. the quantize command's output)")
    p.add_argument("--setting", default="int8-token", choices=["int8-token", "int8"],
                   help="the int8 side's quantize setting (encoder/quantize.py; default int8-token, as the "
                        "quantize command writes; ignored with --int8-model)")
    p.add_argument("--output", default=str(REPO / "studies" / "results" / "quantize" / "quantize.json"))
    add_timing_args(p, 5, "timed rounds (both systems each)")
    p.add_argument("--no-encoder", dest="encoder", action="store_false",
                   help="skip the bare-encoder comparison (torch fp32 / int8, ONNX Runtime)")
    args = p.parse_args(argv)
    args.argv = list(argv) if argv is not None else sys.argv[1:]
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    results = run(args)
    output = write_json(results, args.output)
    r = results["ratios"]
    print(f"speedup {r['speedup']:.2f}x (per CPU second {r['speedup_cpu']:.2f}x); "
          + ", ".join(f"{k} {v:+.2f}" for k, v in r.items() if k.startswith("delta_")), file=sys.stderr)
    print(f"Wrote {output}; the table: python -m studies.table_quantize {output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
