"""Pair Docs: the one way to build input for spacy-paraphrase.

A *pair Doc* is an ordinary spaCy ``Doc`` holding two consecutive turns of a
dialog (first turn, then second turn). The turns are marked in
``doc.spans["turns"]``: exactly two non-empty, non-overlapping spans, the first
turn before the second. Their labels are the speakers' names when given, else
``"FIRST"`` and ``"SECOND"``. ``doc.spans["turns"].attrs`` may carry metadata of
the pair (for example ``"id"``, the ContextDeP QID).

A turn is either a string, tokenized by ``nlp.make_doc``, or a list of words,
kept exactly one token per word so that word-level annotations map back 1:1.
Empty words (ContextDeP has them where its text has double spaces) become
whitespace tokens (``" "``), so word ``i`` of the turn is always token ``i`` of
the turn and the turn's text is exactly ``" ".join(words)``.
"""
import re
import unicodedata
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.vocab import Vocab

TURNS_KEY = "turns"
#: ``paraphrase_spans``' defaults: the ``doc.spans`` key of the highlighted words
#: (``spans_key``) and the label of those spans and ``doc.cats`` key of the pair
#: decision (``label``).
SPANS_KEY = "paraphrase"
PARAPHRASE_LABEL = "PARAPHRASE"
DEFAULT_TURN_LABELS = ("FIRST", "SECOND")

# a turn as make_pair_doc takes it: a string, or a list of words
TurnText = Union[str, Sequence[str]]


class PairDocError(ValueError):
    """Raised for input that cannot be (or is not) a valid pair Doc."""


def _check_encodable(text: str, which: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise PairDocError(
            f"The {which} turn is not valid Unicode text ({err.reason} at position "
            f"{err.start}: {text[err.start:err.end]!r}); lone surrogates usually come "
            "from decoding a file with the wrong encoding or errors='surrogateescape'."
        ) from None


_VISIBLE_ASCII = re.compile(r"[!-~]")
_INVISIBLE = ("Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp", "Mn", "Me")


def has_visible_text(text: str) -> bool:
    """Whether ``text`` has a character the model can read: one that is not
    whitespace, a format, control, private-use or unassigned code point
    (zero-width space, BOM, soft hyphen, ...) or a lone combining mark:
    what a BERT-style tokenizer drops (combining marks: when it strips accents)."""
    if _VISIBLE_ASCII.search(text):
        return True
    return any(unicodedata.category(c) not in _INVISIBLE for c in text)


def turn_text_problem(text: Any, which: str = "given", max_length: Optional[int] = None) -> Optional[str]:
    """Why a turn text cannot be made into a pair Doc and read by the model,
    or None: not a string, empty or whitespace only, not valid Unicode (lone
    surrogates), no visible character (only zero-width spaces, a BOM, soft
    hyphens ...), or longer than ``max_length`` characters (the pipeline's
    ``nlp.max_length``). The one turn-text check: ``make_pair_doc``, the
    annotate records (``annotate/record_format.invalid_side``) and the
    annotate command's skips all ask it."""
    if not isinstance(text, str):
        return f"The {which} turn text must be a string, got {type(text).__name__}."
    if not text.strip():
        return (f"The {which} turn is empty or whitespace only ({text!r}); a pair needs "
                "text in both turns. Filter such pairs out before calling make_pair_doc.")
    try:
        _check_encodable(text, which)
    except PairDocError as err:
        return str(err)
    if max_length is not None and len(text) > max_length:
        return (f"The {which} turn has {len(text)} characters, more than the pipeline takes "
                f"(nlp.max_length = {max_length}).")
    if not has_visible_text(text):
        return (f"The {which} turn has no visible text ({text[:20]!r}: only invisible characters "
                "such as zero-width spaces, a BOM or soft hyphens); the model would read nothing.")
    return None


def words_to_doc(vocab: Vocab, words: Sequence[str], which: str = "given") -> Doc:
    """Build a Doc with exactly one token per word, text == " ".join(words).

    Empty words become whitespace tokens so that indices never shift. At least
    one word must be non-empty.
    """
    words = list(words)
    if not words:
        raise PairDocError("A turn given as a word list must have at least one word.")
    for w in words:
        if not isinstance(w, str):
            raise PairDocError(f"Turn words must be strings, got {type(w).__name__}: {w!r}")
    _check_encodable(" ".join(words), which)
    n_nonempty = sum(1 for w in words if w)
    if n_nonempty == 0:
        raise PairDocError(
            "A turn must contain at least one non-empty word; got only empty words "
            f"({len(words)} of them)."
        )
    n = len(words)
    tokens = [w if w else " " for w in words]
    # Each separator space is either the trailing space of a non-empty word or
    # is consumed by the whitespace token standing for an empty word.
    spaces = [bool(w) and i < n - 1 for i, w in enumerate(words)]
    if not words[-1]:
        # One separator too many: drop the trailing space of the last non-empty word.
        last = max(i for i, w in enumerate(words) if w)
        spaces[last] = False
    doc = Doc(vocab, words=tokens, spaces=spaces)
    return doc


def check_turn_text(text: str, which: str = "given") -> None:
    """Raise PairDocError when ``make_pair_doc`` would reject this turn text
    (``turn_text_problem``)."""
    problem = turn_text_problem(text, which)
    if problem is not None:
        raise PairDocError(problem)


def _turn_to_doc(nlp: Language, turn: TurnText, which: str) -> Doc:
    if isinstance(turn, str):
        check_turn_text(turn, which)
        return nlp.make_doc(turn)
    if isinstance(turn, Doc):
        check_turn_text(turn.text, which)
        return turn
    try:
        words = list(turn)
    except TypeError:
        raise PairDocError(
            f"The {which} turn must be a string or a list of words, got {type(turn).__name__}."
        ) from None
    doc = words_to_doc(nlp.vocab, words, which)
    check_turn_text(doc.text, which)  # the one turn check, for word lists too
    return doc


def make_pair_doc(
    nlp: Language,
    first: TurnText,
    second: TurnText,
    *,
    speakers: Optional[Tuple[str, str]] = None,
    pair_id: Optional[str] = None,
) -> Doc:
    """Build a pair Doc from two turns.

    nlp (Language): provides the vocab and, for string turns, the tokenizer.
    first, second: each a string (tokenized by ``nlp.make_doc``) or a list of
        words (one token per word, kept exactly; empty words become whitespace
        tokens).
    speakers: optional (first_speaker, second_speaker) names, used as the
        labels of ``doc.spans["turns"]``.
    pair_id: optional identifier kept in ``doc.spans["turns"].attrs["id"]``.
    RETURNS (Doc): the pair Doc. Its text is ``first_text + " " + second_text``.

    Raises PairDocError (a ValueError) for an empty or whitespace-only turn.
    """
    labels = DEFAULT_TURN_LABELS
    if speakers is not None:
        labels = tuple(speakers)  # type: ignore
        if len(labels) != 2 or not all(isinstance(s, str) and s for s in labels):
            raise PairDocError(f"speakers must be two non-empty strings, got {speakers!r}")
    doc1 = _turn_to_doc(nlp, first, "first")
    doc2 = _turn_to_doc(nlp, second, "second")
    n1 = len(doc1)
    # ensure_whitespace puts one space between the turns when the first has none.
    doc = Doc.from_docs([doc1, doc2], ensure_whitespace=True)
    # from_docs copies span groups of its inputs; a pair Doc only has its turns.
    doc.spans.clear()
    doc.spans[TURNS_KEY] = [
        Span(doc, 0, n1, label=labels[0]),
        Span(doc, n1, len(doc), label=labels[1]),
    ]
    if pair_id is not None:
        doc.spans[TURNS_KEY].attrs["id"] = pair_id
    return doc


def get_turns(doc: Doc) -> Tuple[Span, Span]:
    """Return the (first, second) turns of a pair Doc, validating them.

    Raises PairDocError naming ``make_pair_doc`` when the Doc has no valid turns.
    """
    if TURNS_KEY not in doc.spans:
        raise PairDocError(
            "This Doc has no doc.spans['turns']: it is not a pair Doc. Build input with "
            "spacy_paraphrase.make_pair_doc(nlp, first, second) instead of nlp(text) or "
            "nlp.make_doc(text)."
        )
    turns = list(doc.spans[TURNS_KEY])
    if len(turns) != 2:
        raise PairDocError(
            f"doc.spans['turns'] must hold exactly two turns, found {len(turns)}. "
            "Build input with spacy_paraphrase.make_pair_doc."
        )
    first, second = turns
    if len(first) == 0 or len(second) == 0:
        raise PairDocError("A turn in doc.spans['turns'] is empty; both turns need tokens.")
    if first.start > second.start:
        raise PairDocError(
            "doc.spans['turns'] is out of order: the first turn must come before the "
            f"second (found starts {first.start} and {second.start})."
        )
    if first.end > second.start:
        raise PairDocError(
            f"The turns overlap (first turn {first.start}:{first.end}, second turn "
            f"{second.start}:{second.end})."
        )
    return first, second


def is_pair_doc(doc: Doc) -> bool:
    try:
        get_turns(doc)
    except PairDocError:
        return False
    return True


def copy_pair_doc(doc: Doc, vocab: Optional[Vocab] = None) -> Doc:
    """A fresh pair Doc with the same tokens, whitespace and turns (no other
    annotation). Used to build the predicted side of training examples."""
    first, second = get_turns(doc)
    words = [t.text for t in doc]
    spaces = [bool(t.whitespace_) for t in doc]
    new = Doc(vocab or doc.vocab, words=words, spaces=spaces)
    new.spans[TURNS_KEY] = [
        Span(new, first.start, first.end, label=first.label_),
        Span(new, second.start, second.end, label=second.label_),
    ]
    for k, v in doc.spans[TURNS_KEY].attrs.items():
        new.spans[TURNS_KEY].attrs[k] = v
    return new


def run_bounds(flags: Sequence[bool], start: int, end: int) -> List[Tuple[int, int]]:
    """``(start, end)`` of the maximal runs of flagged tokens within ``start:end``."""
    inside = numpy.asarray(flags[start:end], dtype=bool)
    if not inside.any():
        return []
    steps = numpy.diff(numpy.concatenate([[False], inside, [False]]).astype(numpy.int8))
    return list(zip((numpy.flatnonzero(steps == 1) + start).tolist(), (numpy.flatnonzero(steps == -1) + start).tolist()))


def runs_to_spans(doc: Doc, flags: Sequence[bool], start: int, end: int, label: str) -> List[Span]:
    """Maximal runs of flagged tokens within ``doc[start:end]`` as labelled spans."""
    return [Span(doc, s, e, label=label) for s, e in run_bounds(flags, start, end)]
