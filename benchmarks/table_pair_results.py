"""Markdown table of the pair-classification results (project command
``pair_results``): for each dataset, the pair-aware pipeline's dev scores
(``metrics/<dataset>_dev.json`` from ``python -m spacy_paraphrase evaluate`` on
model-best, and ``<dataset>_last_dev.json`` on model-last: the bi-encoder has no
model selection, so the fair comparison is last step against last step),
its training time (``metrics/<dataset>_train_time.json`` from
``scripts/timed.py``), inference pairs/second, and the bi-encoder trained on the
same files with the same steps (``benchmarks/results/bi_encoder_<dataset>.json``),
beside the paper's published test number."""
import argparse
import json
from pathlib import Path

DATASETS = {
    # dataset: (split measured here, paper's number, paper's metric)
    "multipit": ("validation (555 pairs)", "F1 83.2 (expert test, DeBERTa-v3-large)", "pos_f"),
    "circa": ("matched dev, 1,000-pair subsample", "accuracy ~88 (relaxed, BERT, question+answer)", "acc"),
    "arpa": ("500 held-out train pairs (no dev released)", "F1 83.7 (test, multilingual BERT)", "pos_f"),
}


def _read(path: Path):
    return json.loads(path.read_text()) if path.exists() else None


def _pct(value):
    return "—" if value is None else f"{100 * value:.1f}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--metrics", type=Path, default=Path("metrics"))
    p.add_argument("--benchmarks", type=Path, default=Path("benchmarks/results"))
    p.add_argument("--pipe", default="pair_classifier")
    p.add_argument("--output", type=Path, default=None)
    args = p.parse_args()
    header = ["dataset", "dev split", "system", "acc", "pos. P", "pos. R", "pos. F1", "macro-F1",
              "train min", "pairs/s", "paper (test)"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, (split, paper, _) in DATASETS.items():
        timing = _read(args.metrics / f"{name}_train_time.json")
        bi = _read(args.benchmarks / f"bi_encoder_{name}.json")
        k = args.pipe + "_"
        for suffix, system in (("", "pair-aware (`pair_classifier`), model-best"),
                               ("_last", "pair-aware, last step (as the bi-encoder)")):
            ours = _read(args.metrics / f"{name}{suffix}_dev.json")
            if ours is None:
                continue
            speed = ours.get("pairs_per_second") if not suffix else None  # timed once, with model-best
            lines.append("| " + " | ".join([
                name, split, system, _pct(ours.get(k + "acc")), _pct(ours.get(k + "pos_p")),
                _pct(ours.get(k + "pos_r")), _pct(ours.get(k + "pos_f")), _pct(ours.get(k + "macro_f")),
                "—" if timing is None else f"{timing['seconds'] / 60:.1f}",
                "—" if not speed else f"{speed:.0f}", paper if not suffix else ""]) + " |")
        if bi is not None:
            lines.append("| " + " | ".join([
                name, split, "bi-encoder [u, v, abs(u-v), u*v]", _pct(bi.get("acc")), _pct(bi.get("pos_p")),
                _pct(bi.get("pos_r")), _pct(bi.get("pos_f")), _pct(bi.get("macro_f")),
                f"{bi['train_seconds'] / 60:.1f}", f"{bi.get('pairs_per_second', 0):.0f}", ""]) + " |")
    table = "\n".join(lines)
    print(table)
    if args.output is not None:
        args.output.write_text(table + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
