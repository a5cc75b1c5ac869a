"""The pair score, the one rule behind a pair's decision: min over the two
turns of the max token probability, so "score >= threshold" means "some word
in *both* turns reaches the threshold" (the ContextDeP paper's rule). The
readout decides with it, the component's pair loss trains the token that sets
it, and the vote-share map reads it as a feature: all three call this module,
so a change to the rule is made here once, with a new ``RULE`` name: fitted
vote-share maps, whose ``pair_score`` feature is this value, record the rule
they were fitted with and warn when loaded under another one (refit them with
``tune --key vote_share``).
"""
from typing import List, Optional, Tuple

import numpy
from spacy.tokens import Doc

from ..pair_doc import get_turns

# The name of the rule below: give it a new one whenever the rule changes.
RULE = "min_turn_max.v1"


def turn_maxima(doc: Doc, probs: numpy.ndarray) -> List[Tuple[float, Optional[int]]]:
    """Per turn (first, second): its highest probability and the Doc index of
    the token that has it; ``(0.0, None)`` for a turn with no probability
    (NaN = none: tokens without pieces, cut tokens)."""
    out: List[Tuple[float, Optional[int]]] = []
    for turn_span in get_turns(doc):
        p = numpy.asarray(probs[turn_span.start : turn_span.end], dtype="float64")
        scored = ~numpy.isnan(p)
        if not scored.any():
            out.append((0.0, None))
            continue
        j = int(numpy.argmax(numpy.where(scored, p, -numpy.inf)))
        out.append((float(p[j]), turn_span.start + j))
    return out


def pair_score_and_token(doc: Doc, probs: numpy.ndarray) -> Tuple[float, Optional[int]]:
    """The pair score and the token that sets it (None when a turn has no
    probability: then the score is 0)."""
    return min(turn_maxima(doc, probs), key=lambda best: best[0])


def pair_score_from_probs(doc: Doc, probs: numpy.ndarray) -> float:
    """min over the two turns of the max token probability (0 for a turn with
    no probability at all)."""
    return pair_score_and_token(doc, probs)[0]
