"""Compatibility module: the documented names of ``paraphrase_spans``, which
now lives in ``spacy_paraphrase.spans`` (README.md, "What the component
writes"). New code should import from ``spacy_paraphrase.spans``."""
from .spans.component import ParaphraseSpans
from .spans.readout import (
    HIGHLIGHT_SCALES,
    PARAPHRASE_LABEL,
    SOURCE_LABEL,
    check_highlight_scale,
    fill_unscored,
    highlight_flags,
    token_probs,
    write_paraphrase_annotations,
)

__all__ = [
    "ParaphraseSpans",
    "HIGHLIGHT_SCALES",
    "PARAPHRASE_LABEL",
    "SOURCE_LABEL",
    "check_highlight_scale",
    "fill_unscored",
    "highlight_flags",
    "token_probs",
    "write_paraphrase_annotations",
]
