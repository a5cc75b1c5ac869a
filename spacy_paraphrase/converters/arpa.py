"""ARPA, the Armenian paraphrase corpus (Malajyan, Avetisyan, Ghukasyan), to
pair Docs.

Input: ``train.tsv`` (tab-separated), header ``Sentence1, Sentence2,
Paraphrase`` with 1 = paraphrase, 0 = near-paraphrase, -1 = not a paraphrase.

Labels: as in the paper, 1 -> ``IS_PARAPHRASE``, 0 and -1 ->
``NOT_PARAPHRASE``; with ``keep_near=True`` 0 -> ``NEAR_PARAPHRASE`` (three
labels). ``doc.cats`` is one-hot over the label set; ``doc.spans["turns"]
.attrs`` holds ``id`` (the 1-based data row number as a string) and ``raw``
(the original value, "1", "0" or "-1"). Texts are Armenian: tokenize with
``lang="hy"`` (``--lang hy``) for Armenian tokenizer rules.
"""
from pathlib import Path
from typing import List, Tuple

from spacy.tokens import Doc
from spacy.vocab import Vocab

from .common import ConversionError, ConversionReport, read_delimited
from .pairs import (
    IS_PARAPHRASE,
    NEAR_PARAPHRASE,
    NOT_PARAPHRASE,
    blank_nlp,
    build_pair,
    check_text,
    one_hot,
    row_error,
)

COLUMNS = ["Sentence1", "Sentence2", "Paraphrase"]


def convert_arpa(
    path,
    vocab: Vocab,
    *,
    keep_near: bool = False,
    skip_bad: bool = False,
    lang: str = "en",
) -> Tuple[List[Doc], ConversionReport]:
    """Convert an ARPA TSV file into pair Docs (see module doc)."""
    path = Path(path)
    if keep_near:
        labels = (IS_PARAPHRASE, NEAR_PARAPHRASE, NOT_PARAPHRASE)
        values = {"1": IS_PARAPHRASE, "0": NEAR_PARAPHRASE, "-1": NOT_PARAPHRASE}
    else:
        labels = (IS_PARAPHRASE, NOT_PARAPHRASE)
        values = {"1": IS_PARAPHRASE, "0": NOT_PARAPHRASE, "-1": NOT_PARAPHRASE}
    nlp = blank_nlp(vocab, lang)
    report = ConversionReport()
    docs: List[Doc] = []
    for line, row in read_delimited(path, "\t", COLUMNS):
        report.n_rows += 1
        try:
            if "__error__" in row:
                raise row_error(path, line, row["__error__"])
            check_text(row["Sentence1"], "Sentence1")
            check_text(row["Sentence2"], "Sentence2")
            value = row["Paraphrase"].strip()
            if value not in values:
                raise ValueError(f"Paraphrase must be 1, 0 or -1, got {value!r}")
            doc = build_pair(nlp, path, line, row["Sentence1"], row["Sentence2"],
                             ("Sentence1", "Sentence2"), pair_id=str(report.n_rows))
        except ValueError as err:
            if not isinstance(err, ConversionError):
                err = ConversionError(path, line, str(err))
            report.bad(err, skip_bad)
            continue
        doc.cats = one_hot(labels, values[value])
        doc.spans["turns"].attrs["raw"] = value
        docs.append(doc)
    if not keep_near:
        report.notes.append(f"Near-paraphrases (0) counted as {NOT_PARAPHRASE}, as in the paper.")
    report.n_docs = len(docs)
    return docs, report
