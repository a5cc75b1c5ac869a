"""Converters from public datasets to DocBin files of pair Docs.

Each converter reads one file and returns a list of reference pair Docs; the
CLI (``python -m spacy_paraphrase convert FORMAT IN OUT``) writes them to a
``.spacy`` file. Bad rows raise ``ConversionError`` naming the file, the line
and the problem; with ``skip_bad=True`` they are counted and left out instead.
"""
from .common import ConversionError, ConversionReport
from .contextdep import convert_contextdep

CONVERTERS = {
    "contextdep": convert_contextdep,
}

__all__ = ["CONVERTERS", "ConversionError", "ConversionReport", "convert_contextdep"]
