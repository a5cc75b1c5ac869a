"""The units a quote and a turn are compared in (``align.py``'s module doc,
step 2): each whitespace word lower-cased, its quotes straightened, its
contractions expanded as spaCy's English tokenizer exceptions norm them, and
split into runs of letters and digits ("It's easy." -> it, is, easy). A turn's
units come from its tokens (their norm where spaCy split a contraction), each
with the index of the token it comes from."""
import re
from typing import List, Tuple

from spacy.tokens import Span

_QUOTE_CHARS = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201b": "'", "\u02bc": "'", "\u2032": "'", "`": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2033": '"',
})
_EDGE_PUNCT = " .,;:!?\"()[]{}<>-\u2013\u2014\u2026*"
_UNIT = re.compile(r"[^\W_]+", re.UNICODE)
# Contraction endings, as spaCy's English tokenizer exceptions norm them.
_SUFFIXES = (
    ("n't", "not"), ("'ve", "have"), ("'re", "are"), ("'ll", "will"), ("'m", "am"), ("'d", "would"), ("'s", "is"),
)
_WHOLE = {"can't": "can not", "cannot": "can not", "won't": "will not", "shan't": "shall not", "ain't": "is not",
          "gonna": "going to", "wanna": "want to", "gotta": "got to", "y'all": "you all", "let's": "let us"}


def _expand(text: str) -> str:
    """Lower-case, straighten quotes, expand contractions."""
    text = text.lower().translate(_QUOTE_CHARS).strip(_EDGE_PUNCT)
    if text in _WHOLE:
        return _WHOLE[text]
    for suffix, full in _SUFFIXES:
        if text.endswith(suffix) and len(text) >= len(suffix):
            head = text[: -len(suffix)]
            if suffix == "n't" and head in ("ca", "wo", "sha"):
                head = {"ca": "can", "wo": "will", "sha": "shall"}[head]
            return f"{head} {full}"
    return text


def text_units(text: str) -> List[str]:
    """The units of a string (``align.py``'s module doc, step 2)."""
    units: List[str] = []
    for word in text.split():
        units.extend(_UNIT.findall(_expand(word)))
    return units


def unit_words(text: str) -> List[int]:
    """Per unit of ``text_units(text)``, the index of the whitespace word it
    comes from ("It's easy" -> it, is, easy -> 0, 0, 1)."""
    return [k for k, word in enumerate(text.split()) for _ in _UNIT.findall(_expand(word))]


def _token_units(token) -> List[str]:
    norm = token.norm_
    # spaCy's tokenizer splits "you've" into "you" + "'ve" (norm "have")
    source = norm if norm and norm != token.lower_ and norm.isalpha() else token.text
    return _UNIT.findall(_expand(source))


def span_units(span: Span) -> Tuple[List[str], List[int]]:
    """The units of a span's tokens and, per unit, its token's index in the Doc."""
    units: List[str] = []
    owners: List[int] = []
    for token in span:
        for unit in _token_units(token):
            units.append(unit)
            owners.append(token.i)
    return units, owners
