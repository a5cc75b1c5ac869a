"""The tuning interface (``spacy_paraphrase/tuning.py``) of a
``pair_classifier``: its one decision ``threshold``, over ``thresholds.py``
(the grid plus quantiles of the decided probabilities)."""
from typing import Dict, Optional, Sequence

from spacy.training import Example

from ..paraphrase_spans.thresholds import score_key_objective
from ..tuning import Found, Tuning, TuningError, sweep_found
from . import thresholds

SHOWN = ("acc", "macro_f", "pos_p", "pos_r", "pos_f")


class ClassifierTuning(Tuning):
    kind = "pair_classifier"
    keys = (thresholds.KEY,)
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
        return thresholds.default_objective(self.name)

    @staticmethod
    def _quantiles(n_quantiles: Optional[int]) -> int:
        return thresholds.N_QUANTILES if n_quantiles is None else n_quantiles

    def find(self, examples: Sequence[Example], key: str, values: Sequence[float], scores_key: str = "",
             n_quantiles: Optional[int] = None) -> Found:
        self.check(key)
        label, objective = self._objective(scores_key)
        cfg = dict(self.pipe.cfg)
        try:
            values = list(thresholds.candidate_values(examples, cfg, values, self._quantiles(n_quantiles)))
            results = thresholds.sweep(examples, cfg, self.name, values, self.pipe.scorer)
        except ValueError as err:  # settings that decide nothing
            raise TuningError(str(err)) from None
        return sweep_found(self.name, key, label, objective, results, [f"{self.name}_{k}" for k in SHOWN])

    def cross_tune(self, examples, *, folds, repeats, seed, pair_scores_key="", highlight_scores_key="",
                   n_quantiles=None, decoding=True, vote_share=True, progress=None) -> Dict[str, object]:
        self.check(highlight_scores_key=highlight_scores_key)
        label, objective = self._objective(pair_scores_key)
        cfg, n_quantiles = dict(self.pipe.cfg), self._quantiles(n_quantiles)
        try:
            objective(thresholds.score_docs(examples[:1], cfg, self.name, self.pipe.scorer))
            result = thresholds.cross_tuned_scores(
                examples, cfg, self.name, folds=folds, repeats=repeats, seed=seed, objective=objective,
                scorer=self.pipe.scorer, n_quantiles=n_quantiles, progress=progress,
            )
        except ValueError as err:
            raise TuningError(str(err)) from None
        result["objectives"] = {"threshold": label}
        result["n_quantiles"] = n_quantiles
        return result
