"""The vote share: the predicted share of annotators who would call a pair a
paraphrase, and the agreement that follows from it.

The pair score (min over the turns of the highest token probability) decides
the pair, but it is not a share: on ContextDeP dev it tracks the real share of
annotators poorly. ``VoteShareMap`` is a logistic map from a few features of
the pair's token probabilities (``FEATURES``, taken as logits) to the share,
fitted on pairs with annotator votes (``fit_vote_share``: the binomial
likelihood of each pair's k "paraphrase" votes out of n, L2-penalised). It is
stored in the component's cfg (``vote_share_map``), so it survives
``to_disk`` and ``spacy package``, and applied by the ``Readout`` in
``nlp.pipe``. A map records the pair-score rule it was fitted with (the
readout's ``pair_score_rule``, ``pair_score.py``; a map saved without it was
fitted with ``UNRECORDED_RULE``) and a ``StaleVoteShareMap`` warning says when
it is loaded by a readout with another rule. ``tune --key vote_share`` fits it on dev;
``cross-tune`` fits it on the tuning folds and scores the held-out fold.

``agreement_of_share(s) = s² + (1 − s)²``: the chance that two annotators
drawn at random agree on the pair, if each says "paraphrase" with chance s.
``annotator_agreement(k, n)`` is the observed counterpart: the share of
annotator pairs that agree.
"""
import math
import warnings
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy
from spacy.tokens import Doc

from ..pair_doc import get_turns
from .pair_score import DEFAULT_RULE, get_rule, rule_name, turn_maxima, turn_top_k_mean

FEATURES = ("pair_score", "first_max", "second_max", "first_top3", "second_top3")
# What `tune --key vote_share` and `cross-tune` fit: the pair score
# alone (a Platt map), chosen over all of FEATURES by the rule in
# docs/results.md, "Span decoding and vote share".
DEFAULT_FEATURES = ("pair_score",)
EPS = 1e-4
# The pair-score rule of the maps saved before maps recorded theirs.
UNRECORDED_RULE = "min_turn_max.v1"
MAP_KEYS = {"features", "coef", "intercept"}


class StaleVoteShareMap(UserWarning):
    """A vote-share map fitted with another pair-score rule than this version's."""


def agreement_of_share(share: float) -> float:
    """s² + (1 − s)²: 1.0 when all would agree, 0.5 at an even split."""
    share = float(share)
    return share * share + (1.0 - share) * (1.0 - share)


def annotator_agreement(k: int, n: int) -> Optional[float]:
    """The share of the n(n−1)/2 annotator pairs that agree, when k of n said
    "paraphrase"; None for fewer than two annotators."""
    if n < 2:
        return None
    return (k * (k - 1) + (n - k) * (n - k - 1)) / (n * (n - 1))


_TOP3 = turn_top_k_mean(3)


def _top3(probs: numpy.ndarray) -> float:
    """The mean of a turn's three highest probabilities (NaN left out; 0: none)."""
    p = probs[~numpy.isnan(probs)]
    return _TOP3(p)[0] if len(p) else 0.0


def pair_features(doc: Doc, probs: numpy.ndarray, rule: Optional[str] = None) -> Dict[str, float]:
    """The values of ``FEATURES`` for one processed pair Doc (probabilities);
    ``pair_score`` under ``rule`` (a registered pair-score rule; default:
    ``pair_score.DEFAULT_RULE``)."""
    probs = numpy.asarray(probs, dtype="float64")
    first, second = get_turns(doc)
    (f_max, _), (s_max, _) = turn_maxima(doc, probs)
    f_top = _top3(probs[first.start : first.end])
    s_top = _top3(probs[second.start : second.end])
    return {"pair_score": get_rule(rule)(doc, probs), "first_max": f_max, "second_max": s_max,
            "first_top3": f_top, "second_top3": s_top}


def _logit(x: numpy.ndarray) -> numpy.ndarray:
    x = numpy.clip(x, EPS, 1 - EPS)
    return numpy.log(x / (1 - x))


def _sigmoid(z: numpy.ndarray) -> numpy.ndarray:
    return 1.0 / (1.0 + numpy.exp(-z))


class VoteShareMap:
    """share = sigmoid(intercept + Σ coef_i · logit(feature_i))."""

    def __init__(self, features: Sequence[str], coef: Sequence[float], intercept: float,
                 pair_score_rule: Optional[str] = None) -> None:
        """``pair_score_rule``: the rule the map was fitted with (default: ``pair_score.DEFAULT_RULE``)."""
        self.pair_score_rule = DEFAULT_RULE if pair_score_rule is None else pair_score_rule
        check_vote_share_map({"features": list(features), "coef": list(coef), "intercept": intercept,
                              "pair_score_rule": self.pair_score_rule}, warn_stale=False)
        self.features = tuple(features)
        self.coef = numpy.asarray(coef, dtype="float64")
        self.intercept = float(intercept)

    @classmethod
    def from_cfg(cls, cfg: Mapping[str, object]) -> "VoteShareMap":
        return cls(cfg["features"], cfg["coef"], cfg["intercept"],  # type: ignore[arg-type]
                   cfg.get("pair_score_rule", UNRECORDED_RULE))  # type: ignore[arg-type]

    def to_cfg(self) -> Dict[str, object]:
        return {"features": list(self.features), "coef": [float(c) for c in self.coef],
                "intercept": self.intercept, "pair_score_rule": self.pair_score_rule}

    def design(self, rows: Sequence[Mapping[str, float]]) -> numpy.ndarray:
        return _logit(numpy.asarray([[row[f] for f in self.features] for row in rows], dtype="float64"))

    def predict(self, rows: Sequence[Mapping[str, float]]) -> numpy.ndarray:
        if not len(rows):
            return numpy.zeros((0,), dtype="float64")
        return _sigmoid(self.intercept + self.design(rows) @ self.coef)

    def predict_doc(self, doc: Doc, probs: numpy.ndarray, rule: Optional[str] = None) -> float:
        """The share of a pair whose pair score is under ``rule`` (the readout's)."""
        return float(self.predict([pair_features(doc, probs, rule)])[0])


def check_vote_share_map(cfg: Optional[Mapping[str, object]], warn_stale: bool = True,
                         rule: Optional[str] = None) -> None:
    """Raise ValueError unless ``cfg`` is None or a valid map's cfg; warn
    (``StaleVoteShareMap``, ``warn_stale``) when the map was fitted with
    another pair-score rule than ``rule`` (the readout's; default
    ``pair_score.DEFAULT_RULE``): once, where a readout takes the map, not
    again for each map built from it."""
    if cfg is None:
        return
    if not isinstance(cfg, Mapping) or not MAP_KEYS <= set(cfg) <= MAP_KEYS | {"pair_score_rule"}:
        raise ValueError(
            "Readout vote_share_map must be null or {features, coef, intercept, pair_score_rule} "
            f"(as `tune --key vote_share` writes it), got {cfg!r}"
        )
    features, coef = list(cfg["features"]), list(cfg["coef"])  # type: ignore[call-overload]
    unknown = [f for f in features if f not in FEATURES]
    if unknown or len(features) != len(coef) or not features:
        raise ValueError(f"vote_share_map: features must be some of {FEATURES}, one coef each; got {cfg!r}")
    values = coef + [cfg["intercept"]]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values):
        raise ValueError(f"vote_share_map: coef and intercept must be finite numbers, got {cfg!r}")
    fitted = cfg.get("pair_score_rule", UNRECORDED_RULE)
    if not isinstance(fitted, str):
        raise ValueError(f"vote_share_map: pair_score_rule must be a string, got {fitted!r}")
    rule = rule_name(DEFAULT_RULE if rule is None else rule)
    if warn_stale and rule_name(fitted) != rule:
        warnings.warn(
            f"The vote_share_map was fitted with the pair-score rule {fitted!r}, this readout computes "
            f"{rule!r}: its vote shares are stale; refit it with `tune --key vote_share`.",
            StaleVoteShareMap, stacklevel=2)


def fit_vote_share(
    rows: Sequence[Mapping[str, float]],
    votes: Sequence[Tuple[int, int]],
    features: Sequence[str] = DEFAULT_FEATURES,
    l2: float = 1.0,
    n_iter: int = 50,
    pair_score_rule: Optional[str] = None,
) -> VoteShareMap:
    """Fit a ``VoteShareMap`` by Newton's method on the binomial likelihood of
    each pair's (k paraphrase votes, n annotators), with an L2 penalty ``l2``
    on the coefficients (not the intercept). Pairs with n = 0 are left out.
    ``pair_score_rule``: the rule the rows' ``pair_score`` was computed with
    (recorded in the map; default ``pair_score.DEFAULT_RULE``)."""
    keep = [i for i, (_, n) in enumerate(votes) if n > 0]
    if len(keep) < 2:
        raise ValueError("Fitting the vote share needs at least two pairs with annotator votes")
    probe = VoteShareMap(features, [0.0] * len(features), 0.0)
    x = probe.design([rows[i] for i in keep])
    k = numpy.asarray([votes[i][0] for i in keep], dtype="float64")
    n = numpy.asarray([votes[i][1] for i in keep], dtype="float64")
    X = numpy.hstack([numpy.ones((len(x), 1)), x])
    w = numpy.zeros(X.shape[1])
    w[0] = float(_logit(numpy.asarray([k.sum() / n.sum()]))[0])
    penalty = numpy.full(X.shape[1], float(l2))
    penalty[0] = 0.0
    for _ in range(n_iter):
        p = _sigmoid(X @ w)
        grad = X.T @ (k - n * p) - penalty * w
        hess = (X * (n * p * (1 - p))[:, None]).T @ X + numpy.diag(penalty) + 1e-9 * numpy.eye(X.shape[1])
        step = numpy.linalg.solve(hess, grad)
        w = w + step
        if numpy.abs(step).max() < 1e-8:
            break
    return VoteShareMap(features, w[1:].tolist(), float(w[0]), pair_score_rule)


def share_scores(predicted: Sequence[float], votes: Sequence[Tuple[int, int]], prefix: str) -> Dict[str, Optional[float]]:
    """How well predicted shares track annotator shares: ``{prefix}_vote_share_pearson``,
    ``_spearman``, ``_ece`` (10 equal-width bins of the predicted share: the
    pair-weighted mean |mean predicted − mean annotator share|), ``_mae``, and
    ``{prefix}_agreement_spearman`` (the agreement of the predicted share
    against ``annotator_agreement``)."""
    from ..metrics import pearson, spearman

    out: Dict[str, Optional[float]] = {f"{prefix}_vote_share_{k}": None for k in ("pearson", "spearman", "ece", "mae")}
    out[f"{prefix}_agreement_spearman"] = None
    pairs: List[Tuple[float, float, Optional[float]]] = [
        (float(s), k / n, annotator_agreement(k, n)) for s, (k, n) in zip(predicted, votes) if n > 0
    ]
    if not pairs:
        return out
    x = numpy.asarray([p[0] for p in pairs])
    y = numpy.asarray([p[1] for p in pairs])
    out[f"{prefix}_vote_share_pearson"] = pearson(x, y)
    out[f"{prefix}_vote_share_spearman"] = spearman(x, y)
    bins = numpy.minimum((x * 10).astype(int), 9)
    out[f"{prefix}_vote_share_ece"] = float(sum(
        (bins == b).mean() * abs(x[bins == b].mean() - y[bins == b].mean()) for b in range(10) if (bins == b).any()
    ))
    out[f"{prefix}_vote_share_mae"] = float(numpy.abs(x - y).mean())
    agree = [(agreement_of_share(s), a) for s, _, a in pairs if a is not None]
    if len(agree) > 1:
        out[f"{prefix}_agreement_spearman"] = spearman(
            numpy.asarray([a for a, _ in agree]), numpy.asarray([b for _, b in agree]))
    return out
