"""A corpus reader that keeps pair Docs intact.

The training reader (``PairCorpus.v1``, a spaCy ``@readers`` function, hence
this module's name); the dialog corpora ``annotate`` reads are
``dialogs.DialogCorpus``.

spaCy's stock ``Corpus`` rebuilds each predicted Doc with
``nlp.make_doc(reference.text)``, which drops ``doc.spans["turns"]`` and can
re-tokenize the words (shifting word-level highlights). This reader builds the
predicted side of each Example as a pair Doc with exactly the reference's
tokens, whitespace and turns, and nothing else.

Config::

    [corpora.train]
    @readers = "spacy_paraphrase.PairCorpus.v1"
    path = ${paths.train}
    shuffle = true
"""
import random
from pathlib import Path
from typing import Callable, Iterable, Iterator, List, Optional, Union

from spacy.language import Language
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.util import registry

from .pair_doc import copy_pair_doc, get_turns


def read_pair_docs(path: Union[str, Path], vocab) -> List[Doc]:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"Pair corpus not found: {path}")
    files = sorted(path.glob("**/*.spacy")) if path.is_dir() else [path]
    if not files:
        raise FileNotFoundError(f"No .spacy files under {path}")
    docs: List[Doc] = []
    for f in files:
        try:
            docs.extend(DocBin().from_disk(f).get_docs(vocab))
        except ValueError as err:
            raise ValueError(f"Cannot read {f} as a DocBin: {err}") from err
    return docs


def pair_examples(docs: List[Doc], vocab) -> Iterator[Example]:
    for i, ref in enumerate(docs):
        try:
            get_turns(ref)
        except ValueError as err:
            raise ValueError(f"Doc {i} of the corpus is not a pair Doc: {err}") from err
        yield Example(copy_pair_doc(ref, vocab), ref)


Augmenter = Callable[[Language, Example], Iterable[Example]]


class PairCorpus:
    """Iterate over Examples of pair Docs from a DocBin file or directory."""

    def __init__(
        self,
        path: Union[str, Path],
        *,
        shuffle: bool = False,
        limit: int = 0,
        seed: Optional[int] = None,
        augmenter: Optional[Augmenter] = None,
    ) -> None:
        self.path = path
        self.shuffle = shuffle
        self.limit = limit
        self.seed = seed
        self.augmenter = augmenter

    def __call__(self, nlp: Language) -> Iterator[Example]:
        docs = read_pair_docs(self.path, nlp.vocab)
        if self.shuffle:
            rng = random.Random(self.seed) if self.seed is not None else random
            rng.shuffle(docs)
        if self.limit > 0:
            docs = docs[: self.limit]
        for example in pair_examples(docs, nlp.vocab):
            if self.augmenter is None:
                yield example
            else:
                yield from self.augmenter(nlp, example)


@registry.readers("spacy_paraphrase.PairCorpus.v1")
def create_pair_corpus(
    path: Optional[Path],
    shuffle: bool = False,
    limit: int = 0,
    seed: Optional[int] = None,
    augmenter: Optional[Augmenter] = None,
) -> Callable[[Language], Iterator[Example]]:
    """Read pair Docs from ``path`` (a .spacy file or a directory of them).

    shuffle: shuffle the Docs each time the corpus is read (training).
    limit: use at most this many Docs (0 = all).
    seed: seed for shuffling (None = spaCy's global random state, which
        ``[training] seed`` fixes).
    augmenter: as in spaCy's ``Corpus``, a function ``(nlp, example)`` yielding
        the examples to train on in its place (``[corpora.train.augmenter]``,
        e.g. ``spacy_paraphrase.swap_turns_augmenter.v1``); applied after
        ``limit``.
    """
    if path is None:
        raise ValueError("spacy_paraphrase.PairCorpus.v1 needs a path (set paths.train / paths.dev).")
    return PairCorpus(path, shuffle=shuffle, limit=limit, seed=seed, augmenter=augmenter)
