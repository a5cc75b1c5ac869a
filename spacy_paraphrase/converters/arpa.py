"""ARPA, the Armenian paraphrase corpus (Malajyan, Avetisyan, Ghukasyan), to
pair Docs: a preset of the pair-file converter.

Input: ``train.tsv`` (tab-separated), header ``Sentence1, Sentence2,
Paraphrase`` with 1 = paraphrase, 0 = near-paraphrase, -1 = not a paraphrase.

Labels: as in the paper, 1 -> ``IS_PARAPHRASE``, 0 and -1 ->
``NOT_PARAPHRASE``; with ``keep_near=True`` 0 -> ``NEAR_PARAPHRASE`` (three
labels). ``doc.cats`` is one-hot over the label set; ``doc.spans["turns"]
.attrs`` holds ``id`` (``{file stem}:{line}``, ``convert_pairs``) and ``raw``
(the original value, "1", "0" or "-1"). Texts are Armenian: tokenize with
``lang="hy"`` (``--lang hy``) for Armenian tokenizer rules.
"""
from typing import List, Tuple

from spacy.tokens import Doc
from spacy.vocab import Vocab

from .common import ConversionReport
from .pairs import IS_PARAPHRASE, NEAR_PARAPHRASE, NOT_PARAPHRASE, PairPreset, convert_preset

_COMMON = dict(
    text1="Sentence1",
    text2="Sentence2",
    label="Paraphrase",
    delimiter="\t",
    label_error="Paraphrase must be 1, 0 or -1, got {raw!r}",
    keep_raw=True,
)
ARPA = PairPreset(
    label_map={"1": IS_PARAPHRASE, "0": NOT_PARAPHRASE, "-1": NOT_PARAPHRASE},
    notes=(f"Near-paraphrases (0) counted as {NOT_PARAPHRASE}, as in the paper.",),
    **_COMMON,  # type: ignore[arg-type]
)
ARPA_NEAR = PairPreset(
    label_map={"1": IS_PARAPHRASE, "0": NEAR_PARAPHRASE, "-1": NOT_PARAPHRASE}, **_COMMON  # type: ignore[arg-type]
)


def convert_arpa(
    path,
    vocab: Vocab,
    *,
    keep_near: bool = False,
    skip_bad: bool = False,
    lang: str = "en",
) -> Tuple[List[Doc], ConversionReport]:
    """Convert an ARPA TSV file into pair Docs (see module doc)."""
    return convert_preset(ARPA_NEAR if keep_near else ARPA, path, vocab, skip_bad=skip_bad, lang=lang)
