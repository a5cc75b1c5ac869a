"""spacy-paraphrase: find paraphrases across the turns of a dialog with spaCy.

Importing the package registers its factories, architectures, scorers and
readers (they are also exposed through entry points, so a config or
``nlp.add_pipe`` finds them without this import).
"""
from .pair_doc import PairDocError, get_turns, make_pair_doc, TURNS_KEY
from . import encoder  # noqa: F401  (registers the pair transformer architectures)
from .paraphrase_spans import ParaphraseSpans, Readout, token_probs  # (registers the spans factories, tagger, scorer)
from . import corpus, augmenters  # noqa: F401
from . import pair_classifier  # noqa: F401
from .visualize import render  # noqa: F401  (HTML of pair Docs, docs/visualize.md)

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
