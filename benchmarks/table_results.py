"""Print a markdown table of dev results from the metrics/*_dev.json files
written by `python -m spacy_paraphrase evaluate` (project command `results`)."""
import argparse
from pathlib import Path

import srsly

KEYS = ["pair_f", "pair_p", "pair_r", "pair_acc", "pair_macro_f", "jaccard_first", "jaccard_second"]
HEADER = ["system", "F1", "P", "R", "acc", "macro-F1", "Jaccard first turn", "Jaccard second turn"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("metrics_dir", type=Path)
    parser.add_argument("--pipe", default="paraphrase_spans")
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for path in sorted(args.metrics_dir.glob("*_dev.json")):
        scores = srsly.read_json(path)
        row = [path.stem[: -len("_dev")]]
        for key in KEYS:
            value = scores.get(f"{args.pipe}_{key}")
            row.append("—" if value is None else f"{value:.3f}")
        lines.append("| " + " | ".join(row) + " |")
    table = "\n".join(lines)
    print(table)
    if args.output is not None:
        args.output.write_text(table + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
