"""Table of ``check-strings`` runs over seeds: the same pairs given as word lists and
as strings (docs/results.md, "Strings and word lists").

    python -m spacy_paraphrase check-strings MODEL corpus/contextdep/dev.spacy -o studies/results/strings/soft_tm_seed5.json
    python -m studies.table_strings studies/results/strings/*.json --output studies/results/strings.md

Each run gives the checks on the string input and both inputs' scores at the
pipeline's thresholds and cross-tuned. The table shows means ± sd over the runs,
and the string-minus-word difference with its standard error over runs.
"""
import argparse
import json
import re
import statistics
from pathlib import Path
from typing import Dict, List

NAME = "paraphrase_spans"
SCORES = ("pair_acc", "jaccard_first", "jaccard_second")
CHECKS = (
    ("strings_punctuation_only_spans", "punctuation-only spans (string input)"),
    ("strings_spans", "spans (string input)"),
    ("strings_turn_max_on_word_share", "turns whose maximum sits on a word character"),
    ("word_jaccard_between_inputs", "word-level Jaccard, strings vs word lists"),
    ("same_decision_share", "identical pair decisions"),
)


def mean_sd(values: List[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.3f}"
    return f"{statistics.mean(values):.3f} ± {statistics.stdev(values):.3f}"


def diff_se(a: List[float], b: List[float]) -> str:
    d = [x - y for x, y in zip(a, b)]
    se = statistics.stdev(d) / len(d) ** 0.5 if len(d) > 1 else 0.0
    return f"{statistics.mean(d):+.3f} ± {se:.3f}"


def table(runs: Dict[str, Dict]) -> str:
    names = sorted(runs)
    lines = [f"Runs: {', '.join(names)} (ContextDeP dev; string input read word by word)", "",
             "| check | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for key, label in CHECKS:
        cells = []
        for n in names:
            v = runs[n]["checks"][key]
            cells.append(f"{v:.3f}" if isinstance(v, float) else str(v))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += ["", "| thresholds | input | " + " | ".join(SCORES) + " |", "|---|---|" + "---|" * len(SCORES)]
    for part, label in (("scores", "as trained"), ("cross_tuned", "cross-tuned")):
        values = {inp: {s: [runs[n][inp][part][f"{NAME}_{s}"] for n in names] for s in SCORES}
                  for inp in ("words", "strings")}
        for inp in ("words", "strings"):
            lines.append(f"| {label} | {inp} | " + " | ".join(mean_sd(values[inp][s]) for s in SCORES) + " |")
        lines.append(f"| {label} | strings − words | "
                     + " | ".join(diff_se(values["strings"][s], values["words"][s]) for s in SCORES) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", type=Path, help="check-strings JSON outputs")
    p.add_argument("--output", type=Path, default=None)
    args = p.parse_args()
    runs = {re.sub(r"\.json$", "", path.name): json.loads(path.read_text()) for path in args.runs}
    text = table(runs)
    print(text)
    if args.output:
        args.output.write_text(text)


if __name__ == "__main__":
    main()
