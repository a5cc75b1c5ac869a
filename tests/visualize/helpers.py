"""Pair Docs made by hand for the visualize tests, and HTML parsing helpers."""
import re
import xml.etree.ElementTree as ET
from typing import List, Optional, Sequence

import numpy
import spacy
from spacy.vocab import Vocab

from spacy_paraphrase import make_pair_doc
from spacy_paraphrase.converters.contextdep import convert_contextdep
from tests.util import write_paraphrase_annotations
from tests.util import HEADER, row

FIRST = "And it will be my 20th time in doing it from Rome ."
SECOND = "Yes , you have been doing this for a while ."


def model_doc(
    probs: Optional[Sequence[float]] = None,
    *,
    first: str = FIRST,
    second: str = SECOND,
    speakers=("GUEST", "HOST"),
    pair_id: Optional[str] = "NPR-1-2",
    threshold: float = 0.3,
    highlight_threshold: float = 0.5,
    highlight_scale: str = "absolute",
):
    """A pair Doc as paraphrase_spans leaves it (written by the component's own
    writer), with the given token probabilities (default: increasing)."""
    nlp = spacy.blank("en")
    doc = make_pair_doc(nlp, first.split(" "), second.split(" "), speakers=speakers, pair_id=pair_id)
    if probs is None:
        probs = numpy.linspace(0.0, 1.0, len(doc))
    write_paraphrase_annotations(
        doc,
        numpy.asarray(probs, dtype="float32"),
        spans_key="paraphrase",
        cats_key="PARAPHRASE",
        threshold=threshold,
        highlight_threshold=highlight_threshold,
        highlight_scale=highlight_scale,
    )
    return doc


GOLD_FIRST = "we had snow  all week"  # a double space: an empty word, as in ContextDeP
GOLD_SECOND = "so a snowy week"


def gold_docs(tmp_path, mode: str):
    """Converted ContextDeP Docs of one pair with 4 annotators: A, B and D found
    a paraphrase, C did not. Highlight counts: "snow" 3, "week" 1 (first
    turn); "snowy" 3, "week" 2 (second turn)."""
    g, h = GOLD_FIRST.split(" "), GOLD_SECOND.split(" ")
    assert len(g) == 6 and len(h) == 4

    def hl(n, idx):
        return str([1 if i in idx else 0 for i in range(n)])

    text = HEADER
    text += row("CNN-9-1", "A", 1, GOLD_FIRST, hl(6, {2, 5}), GOLD_SECOND, hl(4, {2, 3}))
    text += row("CNN-9-1", "B", 1, GOLD_FIRST, hl(6, {2}), GOLD_SECOND, hl(4, {2}))
    text += row("CNN-9-1", "C", 0, GOLD_FIRST, hl(6, set()), GOLD_SECOND, hl(4, set()))
    text += row("CNN-9-1", "D", 1, GOLD_FIRST, hl(6, {2}), GOLD_SECOND, hl(4, {2, 3}))
    path = tmp_path / f"gold_{mode}.tsv"
    path.write_text(text, encoding="utf-8")
    docs, _ = convert_contextdep(path, Vocab(), mode=mode)
    return docs


def parse(html: str) -> ET.Element:
    """The rendered fragment as an XML tree (the markup is well-formed)."""
    return ET.fromstring(html)


def by_class(root: ET.Element, name: str) -> List[ET.Element]:
    return [e for e in root.iter() if name in (e.get("class") or "").split()]


def text_of(element: ET.Element) -> str:
    return "".join(element.itertext())


def alpha(style: str) -> float:
    match = re.search(r"background-color:rgba\((\d+), (\d+), (\d+), ([0-9.]+)\)", style)
    assert match, style
    return float(match.group(4))
