"""Tuning a ``paraphrase_spans`` (and the components read like one: the
baseline, ``paraphrase_llm``) on scored pair Docs: its ``Tuning``
(``SpanTuning``, what the commands call) over the functions below.

- ``threshold``: a pair is a paraphrase when its pair score reaches it.
  Tuned on pair macro-F1 by default (accuracy with ``objective``); never on
  pair F1 alone, which rewards calling every pair a paraphrase.
- ``highlight_threshold``: which words of a paraphrase pair are highlighted.
  Tuned on the mean of the two turns' Jaccards.
- ``decoding``: the span decoding settings (``tune_decoding``), with the
  highlight threshold; ``vote_share``: the vote-share map fitted to the
  annotator votes (``fit_share_map``).

Everything here works on Docs the pipeline has already processed: the
annotations are rewritten from the stored per-token probabilities
(``attrs["token_probs"]``), so a sweep costs one pipeline run. The settings
come as a ``Readout`` (or a component's ``cfg``, read with
``Readout.from_cfg``); a sweep tries ``readout.replace(threshold=value)``.

``cross_tuned_scores`` gives an honest estimate of what tuning buys (the
k-fold loop of ``tuning.folds``): both thresholds are tuned on k-1 folds and
the held-out fold is scored with them. Scores after tuning on the same Docs
are optimistic.

Every function scores with ``scorer``, called as the component calls its own
(``scorer(examples, name=name, **readout.to_cfg())``); the CLI passes the
component's configured scorer (``pipe.scorer``), so a custom
``[components.X.scorer]`` and the keys it adds are what the thresholds are
tuned and reported on. ``None`` (the default, and a component whose scorer is
null) means the built-in ``score_paraphrase_spans``.
"""
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from spacy.tokens import Doc
from spacy.training import Example

from ..paraphrase_spans.readout import Readout
from ..paraphrase_spans.scorer import score_paraphrase_spans
from ..paraphrase_spans.vote_share import DEFAULT_FEATURES, fit_vote_share, pair_features
from .base import Found, Tuning, TuningError
from .folds import check_folds, cross_tuned
from .search import DEFAULT_VALUES, Scorer, score_key_objective, sweep_found

KEYS = ("threshold", "highlight_threshold")
# The span decoding settings (decoding.py) and the values a search tries, in
# the order it tries them.
DECODING_VALUES: Dict[str, Tuple] = {
    "max_spans": (0, 1, 2, 3),
    "max_gap": (0, 1, 2, 3, 5),
    "min_span_length": (0, 1, 2, 3),
    "trim_edges": (False, True),
}
# The least gain in the objective for which the decoding search leaves a setting's value.
DECODING_MIN_GAIN = 0.01
# The shape of highlights a reader can use: at most this many spans per
# highlighted turn and this share of one-word spans (ContextDeP's aggregated
# annotator highlights: 1.15 and 1%). The decoding search keeps to them.
SHAPE_LIMITS = {"spans_per_turn": 1.6, "one_word_spans": 0.10}
SWEEP_KEYS = KEYS + tuple(DECODING_VALUES)

# A Readout, or a component's cfg (read with Readout.from_cfg).
ReadoutLike = Union[Readout, Mapping[str, object]]


def as_readout(readout: ReadoutLike) -> Readout:
    """``readout`` itself, or the Readout of a cfg mapping."""
    return readout if isinstance(readout, Readout) else Readout.from_cfg(readout)


def default_objective(name: str, key: str) -> Tuple[str, Callable[[Dict], float]]:
    """(label, function) of the score a threshold is tuned on."""
    if key == "highlight_threshold":
        return "mean Jaccard", lambda s: (s[f"{name}_jaccard_first"] + s[f"{name}_jaccard_second"]) / 2
    if key == "threshold":
        return f"{name}_pair_macro_f", lambda s: s[f"{name}_pair_macro_f"]
    if key in DECODING_VALUES:
        return "mean Jaccard within the shape limits", shaped_jaccard(name)
    raise ValueError(f"Unknown threshold {key!r}: choose one of {SWEEP_KEYS}")


def shaped_jaccard(name: str, limits: Mapping[str, float] = SHAPE_LIMITS) -> Callable[[Dict], float]:
    """The objective of the span decoding search: the mean of the two
    Jaccards where the output keeps within ``limits`` (spans per highlighted
    turn, share of one-word spans; a score that is None, no spans, is within),
    else that mean minus 1 and minus the excess (so that, when no candidate
    keeps within them, the closest wins)."""

    def objective(s: Dict) -> float:
        jacc = (s[f"{name}_jaccard_first"] + s[f"{name}_jaccard_second"]) / 2
        excess = sum(max(0.0, (s.get(f"{name}_{k}") or 0.0) - v) for k, v in limits.items())
        return jacc if excess == 0 else jacc - 1.0 - excess

    return objective


def annotate(docs: Sequence[Doc], readout: ReadoutLike) -> None:
    """Rewrite the paraphrase annotations of processed Docs with ``readout``
    (from their stored token probabilities)."""
    readout = as_readout(readout)
    for doc in docs:
        readout.reannotate(doc)


def score_docs(
    examples: Sequence[Example], readout: ReadoutLike, name: str, scorer: Optional[Scorer] = None
) -> Dict:
    """The scores of processed Docs, annotated with ``readout``."""
    return (scorer or score_paraphrase_spans)(examples, name=name, **as_readout(readout).to_cfg())


def sweep(
    examples: Sequence[Example],
    readout: ReadoutLike,
    name: str,
    key: str,
    values: Sequence[float],
    scorer: Optional[Scorer] = None,
) -> List[Dict]:
    """Score ``examples`` (predicted side processed) with each value of the
    setting ``key`` (``readout.replace(key=value)``; a threshold or a span
    decoding setting). Leaves the Docs annotated with ``readout`` itself."""
    if key not in SWEEP_KEYS:
        raise ValueError(f"Unknown threshold {key!r}: choose one of {SWEEP_KEYS}")
    readout = as_readout(readout)
    docs = [eg.predicted for eg in examples]
    results = []
    try:
        for value in values:
            value = float(value) if key in KEYS else value
            trial = readout.replace(**{key: value})
            annotate(docs, trial)
            results.append({"value": value, **score_docs(examples, trial, name, scorer)})
    finally:
        annotate(docs, readout)
    return results


def tune(
    examples: Sequence[Example],
    readout: ReadoutLike,
    name: str,
    values: Sequence[float] = DEFAULT_VALUES,
    objectives: Optional[Dict[str, Callable[[Dict], float]]] = None,
    scorer: Optional[Scorer] = None,
    *,
    decoding: bool = False,
    vote_share: bool = False,
    share_features: Sequence[str] = DEFAULT_FEATURES,
) -> Dict[str, object]:
    """Tune ``threshold`` first, then ``highlight_threshold`` with it (highlights
    exist only on pairs called paraphrases); with ``decoding``, then the span
    decoding settings (``tune_decoding``); with ``vote_share``, then fit the
    vote-share map (``fit_share_map``; left as it is on pairs without annotator
    votes). Returns the tuned values; the first best value wins ties."""
    objectives = objectives or {}
    chosen = as_readout(readout)
    for key in KEYS:
        objective = objectives.get(key) or default_objective(name, key)[1]
        chosen = _search_step(examples, chosen, name, key, values, objective, scorer)
    keys: Tuple[str, ...] = KEYS
    if decoding:
        chosen = chosen.replace(**tune_decoding(examples, chosen, name, values, objectives, scorer))
        keys += ("highlight_threshold",) + tuple(DECODING_VALUES)
    if vote_share:
        share_map = fit_share_map(examples, chosen, share_features)
        if share_map is not None:
            chosen = chosen.replace(vote_share_map=share_map)
            keys += ("vote_share_map",)
    return {key: getattr(chosen, key) for key in dict.fromkeys(keys)}


def tune_decoding(
    examples: Sequence[Example],
    readout: ReadoutLike,
    name: str,
    values: Sequence[float] = DEFAULT_VALUES,
    objectives: Optional[Dict[str, Callable[[Dict], float]]] = None,
    scorer: Optional[Scorer] = None,
    min_gain: float = DECODING_MIN_GAIN,
) -> Dict[str, object]:
    """Coordinate search over the span decoding settings: each of
    ``DECODING_VALUES`` in turn (the others fixed at their best so far), with
    ``highlight_threshold`` after the first. Every setting maximizes its
    objective (default: ``shaped_jaccard``, the mean of the two Jaccards within
    ``SHAPE_LIMITS``, for ``highlight_threshold`` too), and moves away from its
    current value only for a gain of more than ``min_gain`` (tuned on a few
    dozen pairs, a smaller gain is noise). Returns the settings."""
    objectives = objectives or {}
    chosen = as_readout(readout)
    order = list(DECODING_VALUES.items())
    order.insert(1, ("highlight_threshold", tuple(values)))
    for key, candidates in order:
        objective = objectives.get(key) or shaped_jaccard(name)
        chosen = _search_step(examples, chosen, name, key, candidates, objective, scorer, min_gain)
    return {key: getattr(chosen, key) for key in ("highlight_threshold",) + tuple(DECODING_VALUES)}


def _search_step(examples: Sequence[Example], chosen, name: str, key: str, candidates: Sequence,
                 objective: Callable[[Dict], float], scorer: Optional[Scorer], min_gain: Optional[float] = None):
    """One coordinate of a search: ``key`` swept over ``candidates``, the
    readout moved to the best value (the first best wins ties). With
    ``min_gain``, the current value is tried too and left only for a gain of
    more than ``min_gain``."""
    current = getattr(chosen, key)
    if min_gain is not None and current not in candidates:
        candidates = (current,) + tuple(candidates)
    results = sweep(examples, chosen, name, key, candidates, scorer)
    best = max(results, key=objective)
    if min_gain is not None:
        stay = next(r for r in results if r["value"] == current)
        if objective(best) <= objective(stay) + min_gain:
            return chosen
    return chosen.replace(**{key: best["value"]})


def fit_share_map(
    examples: Sequence[Example], readout: ReadoutLike, features: Sequence[str] = DEFAULT_FEATURES
) -> Optional[Dict[str, object]]:
    """The vote-share map (``vote_share.fit_vote_share``) fitted on processed
    Docs whose references carry annotator votes (``attrs["votes"]``), as a
    cfg value; None when fewer than two do."""
    readout = as_readout(readout)
    rows, votes = [], []
    for eg in examples:
        attrs = eg.reference.spans[readout.spans_key].attrs if readout.spans_key in eg.reference.spans else {}
        if "votes" not in attrs:
            continue
        k, n = (int(v) for v in attrs["votes"])
        if n > 0:
            rows.append(pair_features(eg.predicted, readout.token_probs(eg.predicted), readout.pair_score_rule))
            votes.append((k, n))
    if len(votes) < 2:
        return None
    return fit_vote_share(rows, votes, features, pair_score_rule=readout.pair_score_rule).to_cfg()


def cross_tuned_scores(
    examples: Sequence[Example],
    readout: ReadoutLike,
    name: str,
    *,
    folds: int = 4,
    repeats: int = 5,
    seed: int = 0,
    values: Sequence[float] = DEFAULT_VALUES,
    objectives: Optional[Dict[str, Callable[[Dict], float]]] = None,
    scorer: Optional[Scorer] = None,
    decoding: bool = False,
    vote_share: bool = False,
    share_features: Sequence[str] = DEFAULT_FEATURES,
    progress: Optional[str] = None,
) -> Dict:
    """Estimate the scores of tuned thresholds on unseen pairs by k-fold
    cross-tuning (``tuning.folds.cross_tuned``): both thresholds are tuned on
    k-1 folds (``tune``) and the held-out fold is annotated and scored with
    them (with ``decoding`` / ``vote_share``, also the span decoding and the
    vote-share map: see ``tune``). ``objectives`` maps a key to the score its tuning
    maximizes (default: ``default_objective``). Returns ``scores`` (mean of
    every numeric key over all held-out folds), ``spread`` (their standard
    deviation) and the values chosen in each fold. The Docs are left
    annotated with ``readout``."""
    readout = as_readout(readout)

    def score(test_on: List[Example], best: Dict[str, float]) -> Dict:
        trial = readout.replace(**best)
        annotate([eg.predicted for eg in test_on], trial)
        return score_docs(test_on, trial, name, scorer)

    examples = list(examples)
    check_folds(len(examples), folds, repeats)  # (before the Docs are touched)
    try:
        return cross_tuned(
            examples,
            lambda tune_on: tune(tune_on, readout, name, values, objectives, scorer,
                                 decoding=decoding, vote_share=vote_share, share_features=share_features),
            score,
            folds=folds, repeats=repeats, seed=seed, progress=progress,
        )
    finally:
        annotate([eg.predicted for eg in examples], readout)


# the keys tuned as a group of settings, not swept as one value
SETTINGS_KEYS = ("decoding", "vote_share")
SHOWN = ("pair_acc", "pair_macro_f", "pair_f", "jaccard_first", "jaccard_second", "token_f",
         "spans_per_turn", "one_word_spans", "vote_share_pearson", "vote_share_ece", "agreement_spearman")
SWEPT = ("pair_acc", "pair_macro_f", "pair_f", "jaccard_first", "jaccard_second")


class SpanTuning(Tuning):
    kind = "paraphrase_spans"
    keys = KEYS + SETTINGS_KEYS
    shown = SHOWN

    def check(self, key="threshold", *, highlight_scale="", highlight_scores_key="", n_quantiles=None) -> None:
        if n_quantiles is not None:
            raise TuningError("--n-quantiles is for a pair_classifier; a paraphrase_spans tries the fixed grid")
        if key not in self.keys:
            raise TuningError(f"--key must be one of {', '.join(self.keys)}, not {key!r}")

    def find(self, examples: Sequence[Example], key: str, values: Sequence[float], scores_key: str = "",
             n_quantiles: Optional[int] = None) -> Found:
        self.check(key, n_quantiles=n_quantiles)
        if key in SETTINGS_KEYS:
            return self._fit_settings(examples, key, values, scores_key)
        if scores_key:
            label, objective = scores_key, score_key_objective(scores_key)
        else:
            label, objective = default_objective(self.name, key)
        results = sweep(examples, dict(self.pipe.cfg), self.name, key, values, self.pipe.scorer)
        return sweep_found(self.name, key, label, objective, results, [f"{self.name}_{k}" for k in SWEPT])

    def _fit_settings(self, examples: Sequence[Example], key: str, values: Sequence[float],
                      scores_key: str) -> Found:
        """The span decoding settings (with the highlight threshold), or the
        vote-share map fitted to the annotator votes; scores before and after."""
        readout, name, scorer = self.pipe.readout, self.name, self.pipe.scorer
        if key == "decoding":
            objective = score_key_objective(scores_key) if scores_key else None
            objectives = {k: objective for k in SWEEP_KEYS[1:]} if objective else None
            try:
                settings = tune_decoding(examples, readout, name, values, objectives, scorer)
            except ValueError as err:  # e.g. a score key the scorer does not give
                raise TuningError(str(err)) from None
        else:
            share_map = fit_share_map(examples, readout)
            if share_map is None:
                raise TuningError("Fitting the vote share needs pair Docs with annotator votes (attrs['votes']), "
                                  "as `convert contextdep` writes them")
            settings = {"vote_share_map": share_map}
        before = score_docs(examples, readout, name, scorer)
        annotate([eg.predicted for eg in examples], readout.replace(**settings))
        after = score_docs(examples, readout.replace(**settings), name, scorer)
        annotate([eg.predicted for eg in examples], readout)
        shown = [k for k in SHOWN if before.get(f"{name}_{k}") is not None]
        tables = [
            (("setting", "value"), [(k, str(v)) for k, v in settings.items()]),
            (("score", "before", "after"),
             [(k, f"{before[f'{name}_{k}']:.4f}", f"{after[f'{name}_{k}']:.4f}") for k in shown]),
        ]
        report = {"key": key, "best": settings, "before": before, "after": after}
        return Found(key, settings, report, tables)

    def cross_tune(self, examples, *, folds, repeats, seed, pair_scores_key="", highlight_scores_key="",
                   n_quantiles=None, decoding=True, vote_share=True, progress=None) -> Dict[str, object]:
        self.check(n_quantiles=n_quantiles)
        keyed = [("threshold", pair_scores_key)] + [(k, highlight_scores_key) for k in SWEEP_KEYS[1:]]
        objectives = {key: score_key_objective(scores_key) for key, scores_key in keyed if scores_key}
        try:
            result = cross_tuned_scores(
                examples, dict(self.pipe.cfg), self.name, folds=folds, repeats=repeats, seed=seed,
                objectives=objectives, scorer=self.pipe.scorer, decoding=decoding, vote_share=vote_share,
                progress=progress,
            )
        except ValueError as err:  # e.g. a score key the scorer does not give
            raise TuningError(str(err)) from None
        result["decoding"], result["vote_share"] = decoding, vote_share
        result["highlight_scale"] = self.pipe.cfg.get("highlight_scale", "absolute")
        result["objectives"] = {
            key: (scores_key or default_objective(self.name, key)[0])
            for key, scores_key in (("threshold", pair_scores_key), ("highlight_threshold", highlight_scores_key))
        }
        return result

