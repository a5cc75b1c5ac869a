"""Tuning the decision ``threshold`` of a ``pair_classifier`` on scored pair
Docs: its ``Tuning`` (``ClassifierTuning``, what the commands call) over the
functions below.

The threshold decides a binary classifier with a ``positive_label`` (positive
iff ``p(positive_label) >= threshold``) and every label of a non-exclusive
one; with exclusive classes over more than two labels the decision is the
argmax and there is nothing to tune. The component writes its probabilities
to ``doc.cats`` and never the decision, so a sweep is a rescoring of Docs the
pipeline has processed once.

Tuned on the component's macro-F1 by default (``{name}_macro_f``), never on
the positive label's F1 alone, which rewards calling every pair a paraphrase.
``cross_tuned_scores`` estimates what a tuned threshold scores on unseen pairs
(the k-fold loop of ``tuning.folds``).

The values tried (``candidate_values``) are a fixed grid (``search.DEFAULT_VALUES``,
0.05 ... 0.95) plus ``n_quantiles`` evenly spaced quantiles of the
probabilities the threshold decides, taken on the Docs it is tuned on (in
cross-tuning: the tuning folds only). A fine-tuned softmax classifier's
probabilities crowd near 0 and 1 (on MultiPIT after six epochs the median
p(paraphrase) is 0.97), where a fixed grid has no value left to try; the
quantiles follow the probabilities wherever they lie.

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

from ..pair_classifier.scorer import score_pair_classifier
from .base import Found, Tuning, TuningError
from .folds import cross_tuned
from .search import DEFAULT_VALUES, Scorer, score_key_objective, sweep_found

KEY = "threshold"
N_QUANTILES = 19
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


def decided_probabilities(examples: Sequence[Example], cfg: Mapping[str, object]) -> numpy.ndarray:
    """The probabilities the threshold is compared with: ``p(positive_label)``
    of each pair for a binary classifier, every label's probability with
    non-exclusive classes."""
    labels = list(cfg.get("labels") or [])
    decided = labels if not cfg.get("exclusive_classes", True) else [cfg.get("positive_label")]
    return numpy.asarray(
        [float(eg.predicted.cats.get(label, 0.0)) for eg in examples for label in decided], dtype="float64"
    )


def candidate_values(
    examples: Sequence[Example],
    cfg: Mapping[str, object],
    values: Sequence[float] = DEFAULT_VALUES,
    n_quantiles: int = N_QUANTILES,
) -> Tuple[float, ...]:
    """The thresholds to try, ascending: ``values`` and the quantiles
    1/(n+1), ..., n/(n+1) of ``decided_probabilities(examples, cfg)`` (rounded
    to 6 decimals; duplicates dropped)."""
    if n_quantiles < 0:
        raise ValueError(f"n_quantiles must be >= 0, got {n_quantiles}")
    chosen = [float(v) for v in values]
    probs = decided_probabilities(examples, cfg)
    if n_quantiles and len(probs):
        levels = numpy.arange(1, n_quantiles + 1) / (n_quantiles + 1)
        chosen += [float(q) for q in numpy.quantile(probs, levels)]
    return tuple(sorted({round(v, 6) for v in chosen}))


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
    n_quantiles: int = N_QUANTILES,
) -> Dict[str, float]:
    """``{"threshold": best value}`` of ``candidate_values(examples, cfg,
    values, n_quantiles)``; the lowest best value wins ties."""
    objective = objective or default_objective(name)[1]
    results = sweep(examples, cfg, name, candidate_values(examples, cfg, values, n_quantiles), scorer)
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
    n_quantiles: int = N_QUANTILES,
    progress: Optional[str] = None,
) -> Dict:
    """Estimate the scores of a tuned threshold on unseen pairs: tuned on k-1
    folds (its candidate quantiles taken on those folds), the held-out fold
    scored with it (``tuning.folds.cross_tuned``)."""
    check_tunable(cfg, name)
    return cross_tuned(
        examples,
        lambda tune_on: tune(tune_on, cfg, name, values, objective, scorer, n_quantiles),
        lambda test_on, best: score_docs(test_on, dict(cfg, **best), name, scorer),
        folds=folds, repeats=repeats, seed=seed, progress=progress,
    )


SHOWN = ("acc", "macro_f", "pos_p", "pos_r", "pos_f")


class ClassifierTuning(Tuning):
    kind = "pair_classifier"
    keys = (KEY,)
    shown = SHOWN

    def check(self, key="threshold", *, highlight_scale="", highlight_scores_key="", n_quantiles=None) -> None:
        if key not in self.keys:
            raise TuningError(f"A pair_classifier has one threshold to tune (--key threshold), not {key!r}")
        given = [opt for opt, value in (("--highlight-scores-key", highlight_scores_key),
                                        ("--highlight-scale", highlight_scale)) if value]
        if given:
            raise TuningError(f"A pair_classifier has no highlights: {' and '.join(given)} "
                              f"{'is' if len(given) == 1 else 'are'} for paraphrase_spans")

    def _objective(self, scores_key: str):
        if scores_key:
            return scores_key, score_key_objective(scores_key)
        return default_objective(self.name)

    @staticmethod
    def _quantiles(n_quantiles: Optional[int]) -> int:
        return N_QUANTILES if n_quantiles is None else n_quantiles

    def find(self, examples: Sequence[Example], key: str, values: Sequence[float], scores_key: str = "",
             n_quantiles: Optional[int] = None) -> Found:
        self.check(key)
        label, objective = self._objective(scores_key)
        cfg = dict(self.pipe.cfg)
        try:
            values = list(candidate_values(examples, cfg, values, self._quantiles(n_quantiles)))
            results = sweep(examples, cfg, self.name, values, self.pipe.scorer)
        except ValueError as err:  # settings that decide nothing
            raise TuningError(str(err)) from None
        return sweep_found(self.name, key, label, objective, results, [f"{self.name}_{k}" for k in SHOWN])

    def cross_tune(self, examples, *, folds, repeats, seed, pair_scores_key="", highlight_scores_key="",
                   n_quantiles=None, decoding=True, vote_share=True, progress=None) -> Dict[str, object]:
        self.check(highlight_scores_key=highlight_scores_key)
        label, objective = self._objective(pair_scores_key)
        cfg, n_quantiles = dict(self.pipe.cfg), self._quantiles(n_quantiles)
        try:
            objective(score_docs(examples[:1], cfg, self.name, self.pipe.scorer))
            result = cross_tuned_scores(
                examples, cfg, self.name, folds=folds, repeats=repeats, seed=seed, objective=objective,
                scorer=self.pipe.scorer, n_quantiles=n_quantiles, progress=progress,
            )
        except ValueError as err:
            raise TuningError(str(err)) from None
        result["objectives"] = {"threshold": label}
        result["n_quantiles"] = n_quantiles
        return result
