"""The ``paraphrase_spans`` component and everything around it: the tagger
model, the readout (token probabilities -> ``doc.cats`` / ``doc.spans``), the
scorer and the reference baselines (tuning it: ``spacy_paraphrase/tuning/spans.py``)."""
from ..lazy import lazy_exports

# imported on first use (spacy_paraphrase/lazy.py)
_EXPORTS = {
    "TokenScores": ".model",
    "build_paraphrase_tagger": ".model",
    "HIGHLIGHT_SCALES": ".readout",
    "PARAPHRASE_LABEL": ".readout",
    "READOUT_KEYS": ".readout",
    "SOURCE_LABEL": ".readout",
    "Readout": ".readout",
    "check_highlight_scale": ".readout",
    "fill_unscored": ".readout",
    "highlight_flags": ".readout",
    "token_probs": ".readout",
    "make_paraphrase_spans_scorer": ".scorer",
    "reference_gold": ".scorer",
    "reference_token_targets": ".scorer",
    "score_paraphrase_spans": ".scorer",
    "ParaphraseSpans": ".component",
    "make_paraphrase_spans": ".component",
    "ParaphraseBaseline": ".baselines",
    "make_paraphrase_baseline": ".baselines",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = list(_EXPORTS)
