"""Coded files of the coding page (``validate sheet``'s ``SHEET.coding.html``;
``validation/coded.py``) to pair Docs: ``convert coded FILE... OUT.spacy``.

The coders of one sheet are a pair's annotators, as ContextDeP's: each coded
pair gives the Docs ContextDeP's converter gives for the same annotations
(``converters.contextdep.pair_docs``): ``votes`` ([coders who said yes,
coders of the pair]), ``highlight_counts`` (per word of both turns, how many
coders highlighted it), ``token_targets``, the gold spans and
``doc.cats["PARAPHRASE"]`` in ``majority``, ``soft`` or ``all`` mode, so
``spacy train`` with the project's configs fine-tunes on them. The words are
the page's (the turn text's whitespace-separated words), the speakers the
records'. Any problem in a file (validation/coded.py) stops the conversion,
naming the file and the pair."""
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from spacy.tokens import Doc
from spacy.vocab import Vocab

from ..validation.coded import read_coded_files
from .common import ConversionReport
from .contextdep import MODES, pair_docs


def convert_coded(paths: Sequence[Path], vocab: Vocab, *, mode: str = "majority") -> Tuple[List[Doc], ConversionReport]:
    """Pair Docs from the coded files of one sheet (module doc)."""
    if mode not in MODES:
        raise ValueError(f"Unknown mode {mode!r}; choose one of {MODES}.")
    files = read_coded_files(paths)  # SheetError: one line naming the file and pair
    order: Dict[str, None] = {}
    for f in files:
        order.update(dict.fromkeys(f.pairs))
    report = ConversionReport(n_rows=sum(len(f.pairs) for f in files))
    docs: List[Doc] = []
    for pid in order:
        coded = [(f.coder, f.pairs[pid]) for f in files if pid in f.pairs]
        first = coded[0][1]
        sizes = [len(w) for w in first.words]
        annotations = []
        for coder, pair in coded:
            flags = [0] * sum(sizes)
            for i in pair.highlight[0]:
                flags[i] = 1
            for i in pair.highlight[1]:
                flags[sizes[0] + i] = 1
            annotations.append((coder, int(pair.paraphrase), flags))
        docs += pair_docs(vocab, pid, first.words, first.speakers, annotations, mode)
    report.n_docs = len(docs)
    report.notes.append(f"{len(order)} pairs coded by {len(files)} coders ({', '.join(f.coder for f in files)}), "
                        f"mode {mode}")
    return docs, report
