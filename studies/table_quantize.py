"""The markdown tables of a ``run_quantize`` result: speed, size and scores of
one pipeline as trained (fp32) and quantized (int8), from the JSON
(``quantize.json``) into ``quantize.md`` beside it (or ``--output``), also
printed.

    python -m studies.table_quantize studies/results/quantize/quantize.json
"""
from typing import Dict, Optional

from benchmarks.table_cli import table_main

SYSTEMS = ("fp32", "int8")


def _f(x: Optional[float], digits: int = 1, sign: bool = False) -> str:
    if x is None:
        return "—"
    return f"{x:+.{digits}f}" if sign else f"{x:,.{digits}f}"


def render_markdown(r: Dict) -> str:
    s, m, ratios = r["settings"], r["machine"], r["ratios"]
    lines = [
        "# Int8 against fp32",
        "",
        f"Command: `{r['command']}`, {r['created']}",
        "",
        f"Model `{s['model']}` ({s['meta_name']}), int8: {s['int8_model']}; data `{s['data']}`, "
        f"{r['data']['n_pairs']} pairs ({r['data']['n_tokens']} tokens); batch size {s['batch_size']}, "
        f"{s['repeats']} rounds (median), {s['torch_threads']} torch threads, quantized engine "
        f"`{s['quantized_engine']}`.",
        "",
        f"Machine: {m['processor']}, {m['cpu_count']} CPUs, flags {', '.join(m['cpu_flags']) or 'none listed'}; "
        f"load average {m['load_average_at_start'][0]:.2f} at the start, {m['load_average_at_end'][0]:.2f} at the end.",
        "",
        "| | pairs/s | pairs per CPU s | transformer state (MB) | RSS growth on load (MB) | load (s) |",
        "|---|---|---|---|---|---|",
    ]
    for system in SYSTEMS:
        sp, ld = r["speed"][system], r["load"][system]
        lines.append(
            f"| {system} | {_f(sp['pairs_per_s'])} | {_f(sp['pairs_per_cpu_s'])} | "
            f"{_f(ld['transformer_state_mb'])} | {_f(ld['rss_load_growth_mb'])} | {_f(ld['load_seconds'])} |"
        )
    lines += [
        "",
        f"Speedup (int8 / fp32 pairs/s): **{_f(ratios['speedup'], 2)}×** (per CPU second "
        f"{_f(ratios['speedup_cpu'], 2)}×, median of the paired rounds {_f(ratios['speedup_median_of_rounds'], 2)}×); "
        f"transformer state int8 / fp32: {_f(ratios['transformer_state_int8_over_fp32'], 2)}.",
        "",
        "| score | fp32 | int8 | int8 − fp32 (points) |",
        "|---|---|---|---|",
    ]
    for key, delta in r["deltas_points"].items():
        lines.append(
            f"| {key} | {_f(r['scores']['fp32'][key], 3)} | {_f(r['scores']['int8'][key], 3)} | {_f(delta, 2, True)} |"
        )
    out = r["outputs"]
    parts = []
    for key, label in (("cats_abs_diff", "doc.cats"), ("token_prob_abs_diff", "token probabilities")):
        if out.get(key):
            parts.append(f"{label} differ by {_f(out[key]['mean'], 4)} on average (largest {_f(out[key]['max'], 4)})")
    if out.get("same_spans_share") is not None:
        parts.append(f"{100 * out['same_spans_share']:.1f}% of the pairs get the same spans")
    if parts:
        lines += ["", "Outputs, pair by pair: " + "; ".join(parts) + "."]
    lines += encoder_lines(r.get("encoder"), s.get("quantize_setting", "int8"))
    for note in r.get("notes", []):
        lines += ["", f"Note: {note}"]
    return "\n".join(lines) + "\n"


ENCODER_LABELS = {
    "torch_fp32": "torch fp32",
    "torch_int8": "torch {setting}",
    "ort_fp32": "ONNX Runtime fp32",
    "ort_int8": "ONNX Runtime dynamic int8",
}


def encoder_lines(e: Optional[Dict], setting: str = "int8") -> list:
    """The bare-encoder table (torch and ONNX Runtime), when it was measured;
    ``setting`` is the int8 pipeline's quantize setting."""
    if not e:
        return []
    lines = [
        "",
        f"Bare encoder, the same {e['n_batches']} padded batches (inputs: {', '.join(e['inputs'])}):",
        "",
        "| encoder | pairs/s | pairs per CPU s | × torch fp32 | hidden-state difference from torch fp32 (mean / max) |",
        "|---|---|---|---|---|",
    ]
    for system, label in ENCODER_LABELS.items():
        label = label.format(setting={"int8": "dynamic int8"}.get(setting, setting))
        row = e["systems"].get(system)
        if row is None:
            continue
        if "skipped" in row:
            lines.append(f"| {label} | skipped: {row['skipped']} | | | |")
            continue
        speedup = 1.0 if system == "torch_fp32" else e["speedups"].get(f"{system}_over_torch_fp32")
        diff = row["hidden_abs_diff_vs_torch_fp32"]
        lines.append(
            f"| {label} | {_f(row['pairs_per_s'])} | {_f(row['pairs_per_cpu_s'])} | {_f(speedup, 2)} | "
            f"{_f(diff['mean'], 4)} / {_f(diff['max'], 4)} |"
        )
    if e.get("onnx_file_mb"):
        lines += ["", "ONNX files (MB): " + ", ".join(f"{k} {_f(v)}" for k, v in sorted(e["onnx_file_mb"].items())) + "."]
    return lines


def main(argv=None) -> None:
    table_main(render_markdown, __doc__, "run_quantize (quantize.json)", argv)


if __name__ == "__main__":
    main()
