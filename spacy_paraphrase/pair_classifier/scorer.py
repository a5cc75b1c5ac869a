"""Scoring the ``pair_classifier`` component.

All keys are prefixed with the component's name (``{name}_...``):

``acc``
    Share of pairs whose predicted label is the gold label (non-exclusive
    labels: whose predicted label *set* equals the gold set).
``macro_f``
    Mean of the per-label F1 over *all* labels of the label set (a label that
    is neither gold nor predicted for any pair counts as F1 = 0, as in
    ``paraphrase_spans``' ``pair_macro_f``).
``per_label``
    ``{label: {"p": ..., "r": ..., "f": ...}}``, one-vs-rest.
``pos_p``, ``pos_r``, ``pos_f`` (only with a ``positive_label``)
    Precision, recall and F1 of the positive label: predicted positive iff
    ``doc.cats[positive_label] >= threshold``; gold positive iff the gold
    label is the positive label.
``pos_auc`` (only with a ``positive_label``)
    ROC AUC of ``doc.cats[positive_label]`` against the gold positive label:
    how well the probabilities *rank* the pairs, whatever the threshold (the
    chance that a random gold positive scores above a random gold negative).
    ``None`` when the gold labels are all positive or all negative.

Gold label: the argmax of the reference Doc's ``cats`` over the label set
(ties go to the label that comes first in the label order), so soft targets
score as their majority label. Predicted label with exclusive classes: for a
binary task (two labels) with a ``positive_label``, the positive label iff
``p(positive) >= threshold``, else the other one; otherwise the argmax of the
predicted ``cats``. With non-exclusive classes, a label is gold iff its
reference value is >= 0.5 and predicted iff its probability is >= threshold.

Every label of the label set must be in the reference ``cats`` (keys outside
the label set are ignored here: they may belong to other components).
"""
from typing import Dict, Iterable, List, Optional, Sequence

import numpy
from spacy.tokens import Doc
from spacy.scorer import ROCAUCScore
from spacy.training import Example
from spacy.util import registry

from ..metrics import pair_classification_scores, prf


def reference_targets(doc: Doc, labels: Sequence[str], where: str = "reference Doc") -> numpy.ndarray:
    """The target values of ``labels`` in ``doc.cats`` (float32), checking
    that every label is there with a value in [0, 1]."""
    missing = [label for label in labels if label not in doc.cats]
    if missing:
        raise ValueError(
            f"The {where}'s cats lack the label(s) {', '.join(map(repr, missing))} of the "
            f"pair classifier's label set {list(labels)}; its cats are {dict(doc.cats)}. "
            "Every reference Doc must list all labels with their target probabilities "
            "(see `python -m spacy_paraphrase convert`)."
        )
    values = numpy.asarray([doc.cats[label] for label in labels], dtype="float32")
    if numpy.isnan(values).any() or (values < 0).any() or (values > 1).any():
        raise ValueError(
            f"The {where}'s cats must hold values in [0, 1] for the labels "
            f"{list(labels)}, got {dict(doc.cats)}."
        )
    return values


def predicted_labels(
    probs: numpy.ndarray,
    labels: Sequence[str],
    *,
    exclusive_classes: bool = True,
    positive_label: Optional[str] = None,
    threshold: float = 0.5,
) -> numpy.ndarray:
    """Decisions for (n_docs, n_labels) probabilities: with exclusive classes
    the index of the predicted label per row (int), else a boolean matrix."""
    probs = numpy.asarray(probs, dtype="float64").reshape(-1, len(labels))
    if not exclusive_classes:
        return probs >= threshold
    if positive_label is not None and len(labels) == 2:
        pos = list(labels).index(positive_label)
        return numpy.where(probs[:, pos] >= threshold, pos, 1 - pos).astype("int64")
    return numpy.argmax(probs, axis=1).astype("int64")


def score_pair_classifier(
    examples: Iterable[Example],
    *,
    name: str = "pair_classifier",
    labels: Optional[Sequence[str]] = None,
    exclusive_classes: bool = True,
    positive_label: Optional[str] = None,
    threshold: float = 0.5,
    **kwargs,
) -> Dict[str, object]:
    """Score predicted ``doc.cats`` against the reference (see module doc).

    labels: the label set; when empty, the sorted union of the reference cats' keys.
    """
    examples = list(examples)
    if not labels:
        labels = sorted({key for eg in examples for key in eg.reference.cats})
    labels = list(labels)
    if positive_label is not None and positive_label not in labels:
        raise ValueError(f"positive_label {positive_label!r} is not one of the labels {labels}.")
    n_labels = len(labels)
    gold_vals = numpy.zeros((len(examples), n_labels), dtype="float64")
    pred_vals = numpy.zeros((len(examples), n_labels), dtype="float64")
    for i, eg in enumerate(examples):
        gold_vals[i] = reference_targets(eg.reference, labels, f"reference Doc {i}")
        pred_vals[i] = [float(eg.predicted.cats.get(label, 0.0)) for label in labels]
    if exclusive_classes:
        gold_idx = numpy.argmax(gold_vals, axis=1) if len(examples) else numpy.zeros((0,), "int64")
        pred_idx = predicted_labels(
            pred_vals, labels, exclusive_classes=True, positive_label=positive_label, threshold=threshold
        )
        gold = numpy.zeros_like(gold_vals, dtype=bool)
        pred = numpy.zeros_like(pred_vals, dtype=bool)
        gold[numpy.arange(len(examples)), gold_idx] = True
        pred[numpy.arange(len(examples)), pred_idx] = True
    else:
        gold = gold_vals >= 0.5
        pred = pred_vals >= threshold
    n = len(examples)
    scores: Dict[str, object] = {
        f"{name}_acc": float((gold == pred).all(axis=1).mean()) if n else 0.0,
    }
    per_label: Dict[str, Dict[str, float]] = {}
    for j, label in enumerate(labels):
        g, p = gold[:, j], pred[:, j]
        lp, lr, lf = prf(float((g & p).sum()), float((~g & p).sum()), float((g & ~p).sum()))
        per_label[label] = {"p": lp, "r": lr, "f": lf}
    scores[f"{name}_macro_f"] = (
        float(numpy.mean([v["f"] for v in per_label.values()])) if per_label else 0.0
    )
    scores[f"{name}_per_label"] = per_label
    if positive_label is not None:
        j = labels.index(positive_label)
        gold_pos: List[bool] = [bool(x) for x in gold[:, j]]
        pred_pos = [bool(x) for x in pred_vals[:, j] >= threshold]
        binary = pair_classification_scores(gold_pos, pred_pos, name)
        for key in ("p", "r", "f"):
            scores[f"{name}_pos_{key}"] = binary[f"{name}_pair_{key}"]
        auc = ROCAUCScore()
        for p_pos, is_pos in zip(pred_vals[:, j], gold_pos):
            auc.score_set(float(p_pos), is_pos)
        scores[f"{name}_pos_auc"] = float(auc.score) if auc.is_binary() else None
    return scores


@registry.scorers("spacy_paraphrase.pair_classifier_scorer.v1")
def make_pair_classifier_scorer():
    return score_pair_classifier
