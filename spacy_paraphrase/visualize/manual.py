"""A pair Doc in displaCy's manual ``style="span"`` format."""
from typing import Any, Dict, List

from spacy.tokens import Doc

from ..pair_doc import PARAPHRASE_LABEL, SPANS_KEY, get_turns
from ..paraphrase_spans.readout import SOURCE_LABEL

# Suggested colours for displacy.render(..., options={"colors": DISPLACY_COLORS}).
DISPLACY_COLORS = {SOURCE_LABEL: "#ffb000", PARAPHRASE_LABEL: "#7aa6e0"}


def displacy_manual(doc: Doc, *, spans_key: str = SPANS_KEY) -> List[Dict[str, Any]]:
    """One dict per turn (``text``, ``tokens``, ``spans`` with turn-relative
    ``start_token`` / ``end_token`` and ``label``, ``title`` = the speaker,
    ``settings``), for ``displacy.render(data, style="span", manual=True)``.

    A turn without spans gets an empty ``spans`` list (manual rendering raises
    no W117 warning for it); a Doc without ``doc.spans[spans_key]`` is treated
    the same. Spans crossing a turn boundary are cut at it. Raises
    PairDocError for a Doc that is not a pair Doc.
    """
    turns = get_turns(doc)
    spans = list(doc.spans[spans_key]) if spans_key in doc.spans else []
    settings = {
        "lang": doc.lang_,
        "direction": doc.vocab.writing_system.get("direction", "ltr"),
    }
    out = []
    for turn_span in turns:
        turn_spans = []
        for span in spans:
            start, end = max(span.start, turn_span.start), min(span.end, turn_span.end)
            if start < end:
                turn_spans.append(
                    {
                        "start_token": start - turn_span.start,
                        "end_token": end - turn_span.start,
                        "label": span.label_,
                    }
                )
        out.append(
            {
                "text": turn_span.text,
                "tokens": [token.text for token in turn_span],
                "spans": turn_spans,
                "title": turn_span.label_,
                "settings": dict(settings),
            }
        )
    return out
