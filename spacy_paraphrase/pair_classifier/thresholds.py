"""Tuning the decision ``threshold`` of a ``pair_classifier`` on scored pair Docs.

The threshold decides a binary classifier with a ``positive_label`` (positive
iff ``p(positive_label) >= threshold``) and every label of a non-exclusive
one; with exclusive classes over more than two labels the decision is the
argmax and there is nothing to tune. The component writes its probabilities
to ``doc.cats`` and never the decision, so a sweep is a rescoring of Docs the
pipeline has processed once.

Tuned on the component's macro-F1 by default (``{name}_macro_f``), never on
the positive label's F1 alone, which rewards calling every pair a paraphrase.
``cross_tuned_scores`` estimates what a tuned threshold scores on unseen pairs
(the k-fold loop of ``cross_tuning``).

Every function scores with ``scorer``, called as the component calls its own
(``scorer(examples, name=name, **cfg)``); the CLI passes the component's
configured scorer (``pipe.scorer``), so a custom ``[components.X.scorer]`` and
the keys it adds are what a threshold is tuned and reported on. ``None`` (the
default, and a component whose scorer is null) means the built-in
``score_pair_classifier``.
"""
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy
from spacy.training import Example

from ..cross_tuning import Scorer, cross_tuned
from .scorer import score_pair_classifier

KEY = "threshold"
DEFAULT_VALUES = tuple(round(float(v), 4) for v in numpy.linspace(0.05, 0.95, 19))
SETTINGS = ("labels", "exclusive_classes", "positive_label", "threshold")


def default_objective(name: str) -> Tuple[str, Callable[[Dict], float]]:
    """(label, function) of the score the threshold is tuned on."""
    return f"{name}_macro_f", lambda s: s[f"{name}_macro_f"]


def check_tunable(cfg: Mapping[str, object], name: str = "pair_classifier") -> None:
    """Raise ValueError when the threshold does not decide any label."""
    labels = list(cfg.get("labels") or [])
    if not cfg.get("exclusive_classes", True):
        return
    if cfg.get("positive_label") is None or len(labels) != 2:
        raise ValueError(
            f"The threshold of {name!r} decides nothing to tune: it has exclusive classes "
            f"over {len(labels)} labels {labels} with positive_label "
            f"{cfg.get('positive_label')!r}, so each pair gets the argmax label. A threshold "
            "is used by a binary classifier with a positive_label, or with "
            "exclusive_classes = false."
        )


def score_docs(
    examples: Sequence[Example], cfg: Mapping[str, object], name: str, scorer: Optional[Scorer] = None
) -> Dict:
    """The scores of processed Docs with the settings in ``cfg``."""
    return (scorer or score_pair_classifier)(examples, name=name, **{k: cfg[k] for k in SETTINGS if k in cfg})


def sweep(
    examples: Sequence[Example],
    cfg: Mapping[str, object],
    name: str,
    values: Sequence[float],
    scorer: Optional[Scorer] = None,
) -> List[Dict]:
    """Score ``examples`` (predicted side processed) with each threshold value."""
    check_tunable(cfg, name)
    return [
        {"value": float(v), **score_docs(examples, dict(cfg, threshold=float(v)), name, scorer)} for v in values
    ]


def tune(
    examples: Sequence[Example],
    cfg: Mapping[str, object],
    name: str,
    values: Sequence[float] = DEFAULT_VALUES,
    objective: Optional[Callable[[Dict], float]] = None,
    scorer: Optional[Scorer] = None,
) -> Dict[str, float]:
    """``{"threshold": best value}``; the first best value wins ties."""
    objective = objective or default_objective(name)[1]
    results = sweep(examples, cfg, name, values, scorer)
    return {KEY: max(results, key=objective)["value"]}


def cross_tuned_scores(
    examples: Sequence[Example],
    cfg: Mapping[str, object],
    name: str,
    *,
    folds: int = 4,
    repeats: int = 5,
    seed: int = 0,
    values: Sequence[float] = DEFAULT_VALUES,
    objective: Optional[Callable[[Dict], float]] = None,
    scorer: Optional[Scorer] = None,
) -> Dict:
    """Estimate the scores of a tuned threshold on unseen pairs: tuned on k-1
    folds, the held-out fold scored with it (``cross_tuning.cross_tuned``)."""
    check_tunable(cfg, name)
    return cross_tuned(
        examples,
        lambda tune_on: tune(tune_on, cfg, name, values, objective, scorer),
        lambda test_on, best: score_docs(test_on, dict(cfg, **best), name, scorer),
        folds=folds, repeats=repeats, seed=seed,
    )
