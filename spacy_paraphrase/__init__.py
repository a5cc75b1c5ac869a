"""spacy-paraphrase: find paraphrases across the turns of a dialog with spaCy.

The package's factories, architectures, scorers, readers and augmenters are
registered through entry points (``setup.cfg``), so a config or
``nlp.add_pipe`` finds them without importing this package.
"""
from .pair_doc import PairDocError, get_turns, make_pair_doc, TURNS_KEY

from .lazy import lazy_exports

# The components, the pair transformer and the renderer pull in
# spacy-transformers: imported on first use (spacy_paraphrase/lazy.py).
__getattr__, __dir__ = lazy_exports(__name__, {
    "ParaphraseSpans": ".paraphrase_spans",
    "Readout": ".paraphrase_spans",
    "token_probs": ".paraphrase_spans",
    "render": ".visualize",
})

__version__ = "0.1.0"

__all__ = [
    "make_pair_doc",
    "get_turns",
    "PairDocError",
    "TURNS_KEY",
    "ParaphraseSpans",
    "Readout",
    "token_probs",
    "render",
]
