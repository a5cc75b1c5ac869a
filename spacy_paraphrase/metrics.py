"""Metric helpers shared by the scorers (``paraphrase_spans.scorer`` and
``pair_classifier.scorer``): precision / recall / F1, Jaccard, expected
calibration error, Pearson and Spearman correlation, and the binary pair
classification scores."""
from typing import Dict, List, Optional, Tuple

import numpy


def prf(tp: float, fp: float, fn: float) -> Tuple[float, float, float]:
    """(precision, recall, F1) from counts; 0.0 where a denominator is 0."""
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f


def jaccard(gold: numpy.ndarray, pred: numpy.ndarray) -> Optional[float]:
    """Intersection over union of two boolean arrays; None when either is empty
    (all False)."""
    if not gold.any() or not pred.any():
        return None
    inter = float((gold & pred).sum())
    union = float((gold | pred).sum())
    return inter / union


def ranks(x: numpy.ndarray) -> numpy.ndarray:
    """0-based ranks of ``x`` (float64), ties sharing their mean rank."""
    order = numpy.argsort(x, kind="mergesort")
    out = numpy.empty(len(x), dtype="float64")
    out[order] = numpy.arange(len(x), dtype="float64")
    for value in numpy.unique(x):
        idx = numpy.where(x == value)[0]
        if len(idx) > 1:
            out[idx] = out[idx].mean()
    return out


def pearson(x: numpy.ndarray, y: numpy.ndarray) -> Optional[float]:
    """Pearson correlation; None for fewer than two values or a constant side."""
    if len(x) < 2 or x.std() == 0 or y.std() == 0:
        return None
    return float(numpy.corrcoef(x, y)[0, 1])


def spearman(x: numpy.ndarray, y: numpy.ndarray) -> Optional[float]:
    """Spearman correlation (Pearson of the ranks, ties averaged); None as ``pearson``."""
    return pearson(ranks(x), ranks(y)) if len(x) > 1 else None


def expected_calibration_error(scores: numpy.ndarray, labels: numpy.ndarray, n_bins: int = 10) -> float:
    """ECE with ``n_bins`` equal-width bins over [0, 1] (the last bin includes
    1.0): ``sum_b |B|/N * |mean score in B - mean label in B|``; 0.0 without scores."""
    if len(scores) == 0:
        return 0.0
    bins = numpy.minimum((scores * n_bins).astype(int), n_bins - 1)
    ece = 0.0
    for b in range(n_bins):
        sel = bins == b
        if sel.any():
            ece += sel.mean() * abs(float(scores[sel].mean()) - float(labels[sel].mean()))
    return float(ece)


def pair_classification_scores(gold: List[bool], pred: List[bool], prefix: str) -> Dict[str, float]:
    """Binary scores with the positive class = paraphrase: ``{prefix}_pair_p``,
    ``_pair_r``, ``_pair_f``, ``_pair_acc`` and ``_pair_macro_f`` (mean of the
    F1 of both classes)."""
    g = numpy.asarray(gold, dtype=bool)
    p = numpy.asarray(pred, dtype=bool)
    tp = float((g & p).sum())
    fp = float((~g & p).sum())
    fn = float((g & ~p).sum())
    tn = float((~g & ~p).sum())
    pp, pr, pf = prf(tp, fp, fn)
    _, _, nf = prf(tn, fn, fp)
    n = len(g)
    return {
        f"{prefix}_pair_p": pp,
        f"{prefix}_pair_r": pr,
        f"{prefix}_pair_f": pf,
        f"{prefix}_pair_acc": (tp + tn) / n if n else 0.0,
        f"{prefix}_pair_macro_f": (pf + nf) / 2,
    }
