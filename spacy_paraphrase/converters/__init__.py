"""Converters from public datasets to DocBin files of pair Docs.

Each converter reads one file and returns a list of reference pair Docs; the
CLI (``python -m spacy_paraphrase convert <format> IN OUT``, one sub-command per
format with its own options, in ``spacy_paraphrase/cli/convert.py``) writes them to a ``.spacy`` file.
Every converter runs the same row loop (``common.convert_rows``: read, check,
build, report): the reader yields a row or a ``BadRow``, the converter's build
step checks and builds it. Bad rows raise ``ConversionError`` naming the file,
the line and the problem; with ``skip_bad=True`` they are counted and left out
instead.

Span-level paraphrase data: ``contextdep``, and ``coded`` (the coding page's
files of one's own coders, ``validate sheet``; several files in, not one). Pair classification (``doc.cats``
one-hot or soft over the whole label set): ``circa``, ``pairs`` (any CSV / TSV
/ JSON Lines file of pairs) and its presets ``multipit`` and ``arpa``.

Exported: the converters and their ``ConversionError`` (docs/api.md); the rest
is imported from its module.
"""
from .arpa import convert_arpa
from .circa import convert_circa
from .coded import convert_coded
from .common import ConversionError
from .contextdep import convert_contextdep
from .multipit import convert_multipit
from .pairs import convert_pairs

__all__ = [
    "ConversionError",
    "convert_arpa",
    "convert_circa",
    "convert_coded",
    "convert_contextdep",
    "convert_multipit",
    "convert_pairs",
]
