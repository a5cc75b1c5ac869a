"""The ``paraphrase_spans`` component and everything around it: the tagger
model, the readout (token probabilities -> ``doc.cats`` / ``doc.spans``), the
scorer, threshold tuning and the reference baselines."""
from .model import TokenScores, build_paraphrase_tagger
from .readout import (
    HIGHLIGHT_SCALES,
    PARAPHRASE_LABEL,
    READOUT_KEYS,
    SOURCE_LABEL,
    Readout,
    check_highlight_scale,
    fill_unscored,
    highlight_flags,
    token_probs,
    write_paraphrase_annotations,
)
from .scorer import make_paraphrase_spans_scorer, reference_gold, reference_token_targets, score_paraphrase_spans
from .component import ParaphraseSpans, make_paraphrase_spans
from .baselines import ParaphraseBaseline, make_paraphrase_baseline
from . import thresholds

__all__ = [
    "ParaphraseSpans",
    "make_paraphrase_spans",
    "TokenScores",
    "build_paraphrase_tagger",
    "Readout",
    "READOUT_KEYS",
    "HIGHLIGHT_SCALES",
    "PARAPHRASE_LABEL",
    "SOURCE_LABEL",
    "check_highlight_scale",
    "fill_unscored",
    "highlight_flags",
    "token_probs",
    "write_paraphrase_annotations",
    "make_paraphrase_spans_scorer",
    "reference_gold",
    "reference_token_targets",
    "score_paraphrase_spans",
    "ParaphraseBaseline",
    "make_paraphrase_baseline",
    "thresholds",
]
