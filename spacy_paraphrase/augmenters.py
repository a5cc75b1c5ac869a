"""Data augmentation for pair corpora (spaCy's ``[corpora.train.augmenter]``).

``spacy_paraphrase.swap_turns_augmenter.v1`` yields every training pair twice:
as given and with its turns swapped (second turn first), keeping the pair's
labels (``doc.cats``). It is for *symmetric* pair labels only: "A paraphrases B"
(MultiPIT, ARPA) holds iff "B paraphrases A". Choosing it is the user's call: a
question and its answer (Circa) are ordered too, and swapping them would teach
the model wrong labels, but nothing in such a Doc says so. What can be checked
is refused: a reference with span annotations besides its turns (ContextDeP's
``SOURCE`` / ``PARAPHRASE`` highlights mark the roles of the two turns).

Config::

    [corpora.train]
    @readers = "spacy_paraphrase.PairCorpus.v1"
    path = ${paths.train}

    [corpora.train.augmenter]
    @augmenters = "spacy_paraphrase.swap_turns_augmenter.v1"

With ``[training] max_epochs >= 0`` spaCy reads the corpus once and shuffles
it every epoch, so an epoch is twice as many steps.
"""
from typing import Iterator

from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.training import Example
from spacy.util import registry

from .corpus import Augmenter
from .pair_doc import TURNS_KEY, copy_pair_doc, get_turns


def swap_turns(doc: Doc) -> Doc:
    """A new pair Doc whose first turn is ``doc``'s second turn and vice versa.

    Tokens and their whitespace are kept, the turns joined as ``make_pair_doc``
    joins them (one space, unless the new first turn ends in whitespace); each
    turn keeps its label (the speaker), and ``doc.cats`` and the turns' attrs
    (the pair id, the raw record) are copied. Raises ValueError for a Doc with
    other span groups, whose positions and roles would not survive, or with
    tokens outside its turns.
    """
    first, second = get_turns(doc)
    # an empty group still carries attrs (ContextDeP's token targets of a non-paraphrase)
    others = sorted(key for key in doc.spans if key != TURNS_KEY)
    if others:
        raise ValueError(
            f"Cannot swap the turns of a Doc with span annotations {others}: they mark "
            "roles of the first and the second turn (SOURCE / PARAPHRASE), which a swap "
            "would mislabel. The swap_turns augmenter is for symmetric pair labels "
            "(doc.cats of a pair_classifier, e.g. MultiPIT or ARPA) only."
        )
    if first.start != 0 or first.end != second.start or second.end != len(doc):
        raise ValueError(
            f"Cannot swap the turns of a Doc with tokens outside them (turns "
            f"{first.start}:{first.end} and {second.start}:{second.end} of {len(doc)} tokens)."
        )
    n2 = len(second)
    words = [t.text for t in second] + [t.text for t in first]
    spaces = [bool(t.whitespace_) for t in second] + [bool(t.whitespace_) for t in first]
    # The separator make_pair_doc adds after the first turn (Doc.from_docs with
    # ensure_whitespace: one space after a last token that is not whitespace)
    # moves with the turns; a whitespace token's own trailing space is kept.
    if not second[-1].is_space:
        spaces[n2 - 1] = True
    if not first[-1].is_space:
        spaces[-1] = False
    swapped = Doc(doc.vocab, words=words, spaces=spaces)
    swapped.spans[TURNS_KEY] = [
        Span(swapped, 0, n2, label=second.label_),
        Span(swapped, n2, len(swapped), label=first.label_),
    ]
    for key, value in doc.spans[TURNS_KEY].attrs.items():
        swapped.spans[TURNS_KEY].attrs[key] = value
    swapped.cats = dict(doc.cats)
    return swapped


def swap_turns_example(example: Example) -> Example:
    """The Example with its reference's turns swapped (predicted side rebuilt
    from it, as ``PairCorpus`` builds it)."""
    reference = swap_turns(example.reference)
    return Example(copy_pair_doc(reference, example.predicted.vocab), reference)


@registry.augmenters("spacy_paraphrase.swap_turns_augmenter.v1")
def create_swap_turns_augmenter() -> Augmenter:
    """Yield each example as given and with its turns swapped."""

    def augment(nlp: Language, example: Example) -> Iterator[Example]:
        yield example
        yield swap_turns_example(example)

    return augment
