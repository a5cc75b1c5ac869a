"""MultiPIT (Dou, Jiang, Xu 2022; the expert-annotated ``multipit_expert``
release) to pair Docs: a preset of the pair-file converter.

Input: ``train.csv`` / ``val.csv`` (comma-separated, CSV double-quote quoting
as written in the release), header ``sentence1, sentence2, label`` with
``label`` 1 = paraphrase, 0 = not.

One Doc per row: turns ``sentence1`` then ``sentence2`` (speakers ``FIRST`` /
``SECOND``; leading and trailing whitespace removed), ``doc.cats`` one-hot
over ``IS_PARAPHRASE`` / ``NOT_PARAPHRASE``, ``doc.spans["turns"].attrs
["id"]`` ``{file stem}:{line}`` (the release has no ids; ``convert_pairs``).
"""
from typing import List, Tuple

from spacy.tokens import Doc
from spacy.vocab import Vocab

from .common import ConversionReport
from .pairs import BINARY_VALUES, PairPreset, convert_preset

MULTIPIT = PairPreset(
    text1="sentence1",
    text2="sentence2",
    label="label",
    delimiter=",",
    label_map=dict(BINARY_VALUES),
    label_error="label must be 0 or 1, got {raw!r}",
)


def convert_multipit(
    path, vocab: Vocab, *, skip_bad: bool = False, lang: str = "en"
) -> Tuple[List[Doc], ConversionReport]:
    """Convert a MultiPIT CSV file into pair Docs (see module doc)."""
    return convert_preset(MULTIPIT, path, vocab, skip_bad=skip_bad, lang=lang)
