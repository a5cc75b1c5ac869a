"""Seeded splits and subsamples of DocBin files of pair Docs.

Used where a dataset ships without a dev split (ARPA) and to make the fixed
CPU subsamples (Circa) as files, so that training, evaluation and the
bi-encoder benchmark all read exactly the same pairs:

    python -m spacy_paraphrase split corpus/arpa/all.spacy corpus/arpa/train.spacy corpus/arpa/dev.spacy --dev 500
    python -m spacy_paraphrase sample corpus/circa/train.spacy corpus/circa/train_3k.spacy --n 3000

Both shuffle with ``random.Random(seed)`` and keep every Doc's spans, cats
and span-group attrs unchanged.
"""
import random
from pathlib import Path
from typing import List, Sequence, Tuple, Union

from spacy.tokens import Doc, DocBin
from spacy.vocab import Vocab

from .corpus import read_pair_docs
from .saving import atomic_write


def shuffled(docs: List[Doc], seed: int) -> List[Doc]:
    docs = list(docs)
    random.Random(seed).shuffle(docs)
    return docs


def split_docs(docs: List[Doc], n_dev: int, seed: int = 0) -> Tuple[List[Doc], List[Doc]]:
    """Return (train, dev) with ``n_dev`` random Docs held out as dev."""
    if n_dev <= 0 or n_dev >= len(docs):
        raise ValueError(f"Cannot hold out {n_dev} of {len(docs)} Docs: need 0 < n_dev < {len(docs)}")
    docs = shuffled(docs, seed)
    return docs[n_dev:], docs[:n_dev]


def sample_docs(docs: List[Doc], n: int, seed: int = 0) -> List[Doc]:
    """Return ``n`` random Docs (all of them, shuffled, if there are fewer)."""
    if n <= 0:
        raise ValueError(f"Sample size must be positive, got {n}")
    return shuffled(docs, seed)[:n]


def write_docs(docs: List[Doc], path: Union[str, Path]) -> None:
    """Write ``docs`` (a DocBin keeping user data) through a temporary file
    renamed into place: a killed write leaves the old file or none."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, DocBin(docs=docs, store_user_data=True).to_disk)


def check_outputs(inputs: Sequence[Union[str, Path]], outputs: Sequence[Union[str, Path]]) -> None:
    """ValueError when an output path is an input or is given twice (one
    write would destroy the other file)."""
    seen = {Path(p).resolve(): "input" for p in inputs}
    for path in outputs:
        resolved = Path(path).resolve()
        if resolved in seen:
            raise ValueError(f"{path} is also an {seen[resolved]}: give each output its own path")
        seen[resolved] = "output"


def read_docs(path: Union[str, Path], vocab: Vocab) -> List[Doc]:
    return read_pair_docs(path, vocab)
