"""The tuning interface (``spacy_paraphrase/tuning.py``) of a
``paraphrase_spans`` component, and of the components read like one (the
baseline, ``paraphrase_llm``): the pair ``threshold``, the
``highlight_threshold``, the span ``decoding`` settings and the ``vote_share``
map, over ``thresholds.py``."""
from typing import Dict, Optional, Sequence

from spacy.training import Example

from ..tuning import Found, Tuning, TuningError, sweep_found
from . import thresholds

# the keys tuned as a group of settings, not swept as one value
SETTINGS_KEYS = ("decoding", "vote_share")
SHOWN = ("pair_acc", "pair_macro_f", "pair_f", "jaccard_first", "jaccard_second", "token_f",
         "spans_per_turn", "one_word_spans", "vote_share_pearson", "vote_share_ece", "agreement_spearman")
SWEPT = ("pair_acc", "pair_macro_f", "pair_f", "jaccard_first", "jaccard_second")


class SpanTuning(Tuning):
    kind = "paraphrase_spans"
    keys = thresholds.KEYS + SETTINGS_KEYS
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
            label, objective = scores_key, thresholds.score_key_objective(scores_key)
        else:
            label, objective = thresholds.default_objective(self.name, key)
        results = thresholds.sweep(examples, dict(self.pipe.cfg), self.name, key, values, self.pipe.scorer)
        return sweep_found(self.name, key, label, objective, results, [f"{self.name}_{k}" for k in SWEPT])

    def _fit_settings(self, examples: Sequence[Example], key: str, values: Sequence[float],
                      scores_key: str) -> Found:
        """The span decoding settings (with the highlight threshold), or the
        vote-share map fitted to the annotator votes; scores before and after."""
        readout, name, scorer = self.pipe.readout, self.name, self.pipe.scorer
        if key == "decoding":
            objective = thresholds.score_key_objective(scores_key) if scores_key else None
            objectives = {k: objective for k in thresholds.SWEEP_KEYS[1:]} if objective else None
            try:
                settings = thresholds.tune_decoding(examples, readout, name, values, objectives, scorer)
            except ValueError as err:  # e.g. a score key the scorer does not give
                raise TuningError(str(err)) from None
        else:
            share_map = thresholds.fit_share_map(examples, readout)
            if share_map is None:
                raise TuningError("Fitting the vote share needs pair Docs with annotator votes (attrs['votes']), "
                                  "as `convert contextdep` writes them")
            settings = {"vote_share_map": share_map}
        before = thresholds.score_docs(examples, readout, name, scorer)
        thresholds.annotate([eg.predicted for eg in examples], readout.replace(**settings))
        after = thresholds.score_docs(examples, readout.replace(**settings), name, scorer)
        thresholds.annotate([eg.predicted for eg in examples], readout)
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
        keyed = [("threshold", pair_scores_key)] + [(k, highlight_scores_key) for k in thresholds.SWEEP_KEYS[1:]]
        objectives = {key: thresholds.score_key_objective(scores_key) for key, scores_key in keyed if scores_key}
        try:
            result = thresholds.cross_tuned_scores(
                examples, dict(self.pipe.cfg), self.name, folds=folds, repeats=repeats, seed=seed,
                objectives=objectives, scorer=self.pipe.scorer, decoding=decoding, vote_share=vote_share,
                progress=progress,
            )
        except ValueError as err:  # e.g. a score key the scorer does not give
            raise TuningError(str(err)) from None
        result["decoding"], result["vote_share"] = decoding, vote_share
        result["highlight_scale"] = self.pipe.cfg.get("highlight_scale", "absolute")
        result["objectives"] = {
            key: (scores_key or thresholds.default_objective(self.name, key)[0])
            for key, scores_key in (("threshold", pair_scores_key), ("highlight_threshold", highlight_scores_key))
        }
        return result

