"""The markdown tables of a ``run_speed`` result: inference, training,
ratios, scaling and notes, from the JSON (``speed.json``) into ``speed.md``
beside it (or ``--output``), also printed. See ``benchmarks/README.md``.

    python -m benchmarks.table_speed benchmarks/results/speed.json
"""
from typing import Dict

from .speed_measure import ratio
from .speed_systems import INFER_SYSTEMS, SYSTEM_LABELS, TRAIN_SYSTEMS
from .table_cli import table_main


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
                f"{_f(ratio(c.get('pairs_per_s'), b.get('pairs_per_s')), 2)} | {g(b, 'words_per_s', 0)} | "
                f"{g(c, 'words_per_s', 0)} | {g(b, 'peak_rss_mb', 0)} | {g(c, 'peak_rss_mb', 0)} | "
                f"{grow(b)} | {grow(c)} |"
            )
        lines.append("")
    if r.get("notes"):
        lines += ["## Notes", ""] + [f"- {n}" for n in r["notes"]] + [""]
    lines.append(f"Total benchmark time {r['total_seconds']:.0f} s.")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    table_main(render_markdown, __doc__, "run_speed (speed.json)", argv)


if __name__ == "__main__":
    main()
