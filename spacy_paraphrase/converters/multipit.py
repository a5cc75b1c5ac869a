"""MultiPIT (Dou, Jiang, Xu 2022; the expert-annotated ``multipit_expert``
release) to pair Docs.

Input: ``train.csv`` / ``val.csv`` (comma-separated, CSV double-quote quoting
as written in the release), header ``sentence1, sentence2, label`` with
``label`` 1 = paraphrase, 0 = not.

One Doc per row: turns ``sentence1`` then ``sentence2`` (speakers ``FIRST`` /
``SECOND``; leading and trailing whitespace removed), ``doc.cats`` one-hot
over ``IS_PARAPHRASE`` / ``NOT_PARAPHRASE``, ``doc.spans["turns"].attrs
["id"]`` the 1-based data row number as a string (the release has no ids).
"""
from pathlib import Path
from typing import List, Tuple

from spacy.tokens import Doc
from spacy.vocab import Vocab

from .common import ConversionError, ConversionReport, read_delimited
from .pairs import BINARY_LABELS, BINARY_VALUES, blank_nlp, build_pair, check_text, one_hot, row_error

COLUMNS = ["sentence1", "sentence2", "label"]


def convert_multipit(
    path, vocab: Vocab, *, skip_bad: bool = False, lang: str = "en"
) -> Tuple[List[Doc], ConversionReport]:
    """Convert a MultiPIT CSV file into pair Docs (see module doc)."""
    path = Path(path)
    nlp = blank_nlp(vocab, lang)
    report = ConversionReport()
    docs: List[Doc] = []
    for line, row in read_delimited(path, ",", COLUMNS):
        report.n_rows += 1
        try:
            if "__error__" in row:
                raise row_error(path, line, row["__error__"])
            check_text(row["sentence1"], "sentence1")
            check_text(row["sentence2"], "sentence2")
            value = row["label"].strip()
            if value not in BINARY_VALUES:
                raise ValueError(f"label must be 0 or 1, got {value!r}")
            doc = build_pair(nlp, path, line, row["sentence1"], row["sentence2"],
                             ("sentence1", "sentence2"), pair_id=str(report.n_rows))
        except ValueError as err:
            if not isinstance(err, ConversionError):
                err = ConversionError(path, line, str(err))
            report.bad(err, skip_bad)
            continue
        doc.cats = one_hot(BINARY_LABELS, BINARY_VALUES[value])
        docs.append(doc)
    report.n_docs = len(docs)
    return docs, report
