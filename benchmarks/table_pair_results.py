"""Markdown table of the pair-classification results (project command
``pair_results``): for each dataset and each backbone (``vars.backbone``:
minilm, mpnet, e5, ...), the pair-aware pipeline's dev scores
(``metrics/<dataset>_<backbone>_dev.json`` from ``python -m spacy_paraphrase
evaluate`` on model-best, and ``<dataset>_<backbone>_last_dev.json`` on
model-last: the bi-encoder has no model selection, so the fair comparison is
last step against last step), its training time
(``metrics/<dataset>_<backbone>_train_time.json`` from ``scripts/timed.py``),
inference pairs/second, and the bi-encoder trained on the same files with the
same steps (``benchmarks/results/bi_encoder_<dataset>.json``, all-MiniLM-L6-v2:
shown with the minilm rows), beside the paper's published test number. A
backbone is listed for a dataset when any of its files is there."""
import argparse
import json
from pathlib import Path
from typing import List, Optional

DATASETS = {
    # dataset: (split measured here, paper's number, paper's metric)
    "multipit": ("validation (555 pairs)", "F1 83.2 (expert test, DeBERTa-v3-large)", "pos_f"),
    "circa": ("matched dev, 1,000-pair subsample", "accuracy ~88 (relaxed, BERT, question+answer)", "acc"),
    "arpa": ("500 held-out train pairs (never used for selection)", "F1 83.7 (test, multilingual BERT)", "pos_f"),
}
# the backbone keys of project.yml, in this order; any other key found in the
# metrics folder follows, sorted
BACKBONES = ("minilm", "mpnet", "e5")
# the stored bi-encoder results (benchmarks/results/bi_encoder_<dataset>.json)
# were trained with this backbone
BI_ENCODER_BACKBONE = "minilm"
HEADER = ["dataset", "backbone", "dev split", "system", "acc", "pos. P", "pos. R", "pos. F1", "macro-F1",
          "train min", "pairs/s", "paper (test)"]


def _read(path: Path):
    return json.loads(path.read_text()) if path.exists() else None


def _pct(value):
    return "—" if value is None else f"{100 * value:.1f}"


def backbones(metrics: Path, dataset: str) -> List[str]:
    """The backbone keys with a metrics file for ``dataset``:
    ``<dataset>_<key>_dev.json``, ``<dataset>_<key>_last_dev.json`` or
    ``<dataset>_<key>_train_time.json``. Files of the earlier names without a
    key (``<dataset>_dev.json``, ``<dataset>_last_dev.json``,
    ``<dataset>_train_time.json``, all from minilm) are not read: rename them
    to ``<dataset>_minilm_...`` to list them."""
    found = set()
    prefix = dataset + "_"
    for path in metrics.glob(f"{prefix}*.json"):
        stem = path.stem[len(prefix):]
        if stem in ("dev", "last_dev", "train_time"):
            continue
        for suffix in ("_last_dev", "_dev", "_train_time"):
            if stem.endswith(suffix) and len(stem) > len(suffix):
                found.add(stem[: -len(suffix)])
                break
    return [b for b in BACKBONES if b in found] + sorted(found - set(BACKBONES))


def table(metrics: Path, benchmarks: Path, pipe: str = "pair_classifier") -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    k = pipe + "_"
    for name, (split, paper, _) in DATASETS.items():
        bi = _read(benchmarks / f"bi_encoder_{name}.json")
        keys = backbones(metrics, name)
        if bi is not None and BI_ENCODER_BACKBONE not in keys:
            keys = [BI_ENCODER_BACKBONE] + keys
        for backbone in keys:
            timing = _read(metrics / f"{name}_{backbone}_train_time.json")
            for suffix, system in (("", "pair-aware (`pair_classifier`), model-best"),
                                   ("_last", "pair-aware, last step (as the bi-encoder)")):
                ours = _read(metrics / f"{name}_{backbone}{suffix}_dev.json")
                if ours is None:
                    continue
                speed = ours.get("pairs_per_second") if not suffix else None  # timed once, with model-best
                lines.append("| " + " | ".join([
                    name, backbone, split, system, _pct(ours.get(k + "acc")), _pct(ours.get(k + "pos_p")),
                    _pct(ours.get(k + "pos_r")), _pct(ours.get(k + "pos_f")), _pct(ours.get(k + "macro_f")),
                    "—" if timing is None else f"{timing['seconds'] / 60:.1f}",
                    "—" if not speed else f"{speed:.0f}", paper if not suffix else ""]) + " |")
            if bi is not None and backbone == BI_ENCODER_BACKBONE:
                lines.append("| " + " | ".join([
                    name, backbone, split, "bi-encoder [u, v, abs(u-v), u*v]", _pct(bi.get("acc")),
                    _pct(bi.get("pos_p")), _pct(bi.get("pos_r")), _pct(bi.get("pos_f")), _pct(bi.get("macro_f")),
                    f"{bi['train_seconds'] / 60:.1f}", f"{bi.get('pairs_per_second', 0):.0f}", ""]) + " |")
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--metrics", type=Path, default=Path("metrics"))
    p.add_argument("--benchmarks", type=Path, default=Path("benchmarks/results"))
    p.add_argument("--pipe", default="pair_classifier")
    p.add_argument("--output", type=Path, default=None)
    args = p.parse_args(argv)
    text = table(args.metrics, args.benchmarks, args.pipe)
    print(text)
    if args.output is not None:
        args.output.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
