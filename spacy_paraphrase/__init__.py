"""spacy-paraphrase: find paraphrases across the turns of a dialog with spaCy.

The package's factories, architectures, scorers, readers and augmenters are
registered through entry points (``setup.cfg``), so a config or
``nlp.add_pipe`` finds them without importing this package. What it exports is
the public API of docs/api.md; everything else is imported from the module
that defines it.
"""
import importlib

from .pair_doc import PairDocError, get_turns, make_pair_doc, TURNS_KEY

__version__ = "0.1.0"

# token_probs and render are imported on first use (PEP 562): the components
# and the renderer pull in spacy-transformers, which a help text or a data
# converter does not need.
_LAZY = {"token_probs": ".paraphrase_spans.readout", "render": ".visualize.markup"}


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = ["make_pair_doc", "get_turns", "PairDocError", "TURNS_KEY", "token_probs", "render"]
