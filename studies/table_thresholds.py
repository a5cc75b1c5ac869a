"""Markdown tables of how the dev metrics move with each threshold, from the
sweep files that ``python -m spacy_paraphrase tune ... --output``
writes (``{"key", "objective", "best", "sweep": [{"value", scores...}]}``).

    python -m studies.table_thresholds metrics/modes_majority_seed0_tuned.threshold.json \\
        metrics/modes_majority_seed0_tuned.highlight_threshold.json --every 2
"""
import argparse
import json
from pathlib import Path

SHOWN = [("pair_acc", "acc"), ("pair_macro_f", "macro-F1"), ("pair_f", "F1"), ("pair_p", "P"), ("pair_r", "R"),
         ("jaccard_first", "J first"), ("jaccard_second", "J second"), ("token_f", "token F1")]


def table(path: Path, pipe: str, every: int) -> str:
    data = json.loads(path.read_text())
    key, best = data["key"], data["best"]
    lines = [f"`{key}` (objective: {data['objective']}; best {best:.2f}), from `{path}`:", "",
             "| " + key + " | " + " | ".join(label for _, label in SHOWN) + " |",
             "|" + "---|" * (len(SHOWN) + 1)]
    for i, row in enumerate(data["sweep"]):
        if i % every and row["value"] != best:
            continue
        mark = "**" if row["value"] == best else ""
        cells = [f"{mark}{row['value']:.2f}{mark}"] + [f"{row.get(f'{pipe}_{k}', float('nan')):.3f}" for k, _ in SHOWN]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sweeps", nargs="+", type=Path)
    p.add_argument("--pipe", default="paraphrase_spans")
    p.add_argument("--every", type=int, default=1, help="show every n-th value (and the best)")
    p.add_argument("--output", type=Path, default=None)
    args = p.parse_args()
    text = "\n\n".join(table(path, args.pipe, args.every) for path in args.sweeps)
    print(text)
    if args.output is not None:
        args.output.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
