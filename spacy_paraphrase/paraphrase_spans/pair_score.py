"""The pair score: how a pair's score comes from the word probabilities of its
two turns. It is a registered, versioned rule (``registry.misc``), named in the
``paraphrase_spans`` component's config (``pair_score = {"@misc":
"spacy_paraphrase.min_turn_max.v1"}``) and kept by name in its ``cfg``
(``pair_score_rule``), so a saved pipeline keeps the rule its thresholds were
tuned for; a changed rule is a new name, never a new body under an old one.

- ``spacy_paraphrase.min_turn_max.v1`` (the default, the ContextDeP paper's
  rule): min over the two turns of the turn's highest probability, so "score
  >= threshold" means "some word in *both* turns reaches the threshold".
- ``spacy_paraphrase.min_turn_top3_mean.v1``: min over the two turns of the
  mean of the turn's three highest probabilities (all of them when a turn has
  fewer).

A turn with no probability at all (NaN = none) scores 0. Every rule gives the
score and its weights, d score / d p for each token (``score_and_weights``):
one-hot at the argmax for a max, 1/k on each of the top k for a top-k mean,
all in the turn that sets the min. The readout decides with the score, the
component's pair loss sends its gradient through the weights, and the
vote-share map reads the score as its ``pair_score`` feature. Both training
and inference score the probabilities the readout stores (``readout.
fill_unscored``: tokens without wordpieces take a neighbour's probability), so
the score trained is the score written; the loss moves a filled token's weight
onto the token whose probability it took.

Pipelines saved before the rule was named (no ``pair_score_rule`` in their
cfg) were scored with ``LEGACY_RULE`` and load with it; vote-share maps of
that time recorded the rule as ``"min_turn_max.v1"`` (``OLD_NAMES``).
"""
import dataclasses
from functools import lru_cache
from typing import Callable, List, Optional, Tuple, Union

import numpy
from spacy.tokens import Doc
from spacy.util import registry

from ..pair_doc import get_turns

# The factory's default rule.
DEFAULT_RULE = "spacy_paraphrase.min_turn_max.v1"
# The rule of every pipeline saved before rules were named: keep it this one.
LEGACY_RULE = "spacy_paraphrase.min_turn_max.v1"
# Names that came before the registered ones (vote-share maps recorded them).
OLD_NAMES = {"min_turn_max.v1": "spacy_paraphrase.min_turn_max.v1"}

# One turn's scored probabilities (no NaN, at least one) -> its value and
# d value / d p for each of them.
TurnReduce = Callable[[numpy.ndarray], Tuple[float, numpy.ndarray]]


def turn_max(p: numpy.ndarray) -> Tuple[float, numpy.ndarray]:
    """The highest probability; weight 1 on (the first) token that has it."""
    weights = numpy.zeros(len(p))
    j = int(numpy.argmax(p))
    weights[j] = 1.0
    return float(p[j]), weights


def turn_top_k_mean(k: int) -> TurnReduce:
    """The mean of the k highest probabilities (all, when fewer); weight 1/k'
    on each of them (k' = how many were averaged)."""

    def reduce(p: numpy.ndarray) -> Tuple[float, numpy.ndarray]:
        top = numpy.argsort(-p, kind="stable")[:k]
        weights = numpy.zeros(len(p))
        weights[top] = 1.0 / len(top)
        return float(p[top].mean()), weights

    return reduce


@dataclasses.dataclass(frozen=True)
class PairScoreRule:
    """A pair-score rule: min over the two turns of ``turn_reduce`` of each
    turn's probabilities. ``name``: its registered name."""

    name: str
    turn_reduce: TurnReduce

    def turn_values(self, doc: Doc, probs: numpy.ndarray) -> List[Tuple[float, numpy.ndarray]]:
        """Per turn (first, second): its value and the weights (d value / d p)
        over the whole Doc; ``(0.0, zeros)`` for a turn with no probability."""
        probs = numpy.asarray(probs, dtype="float64")
        out = []
        for turn in get_turns(doc):
            weights = numpy.zeros(len(doc))
            p = probs[turn.start : turn.end]
            scored = numpy.flatnonzero(~numpy.isnan(p))
            if not len(scored):
                out.append((0.0, weights))
                continue
            value, w = self.turn_reduce(p[scored])
            weights[turn.start + scored] = w
            out.append((value, weights))
        return out

    def score_and_weights(self, doc: Doc, probs: numpy.ndarray) -> Tuple[float, numpy.ndarray]:
        """The pair score and d score / d p per token (0 outside the turn that
        sets the min; the first turn on a tie)."""
        return min(self.turn_values(doc, probs), key=lambda value: value[0])

    def __call__(self, doc: Doc, probs: numpy.ndarray) -> float:
        return self.score_and_weights(doc, probs)[0]


MIN_TURN_MAX = PairScoreRule("spacy_paraphrase.min_turn_max.v1", turn_max)
MIN_TURN_TOP3_MEAN = PairScoreRule("spacy_paraphrase.min_turn_top3_mean.v1", turn_top_k_mean(3))


@registry.misc("spacy_paraphrase.min_turn_max.v1")
def make_min_turn_max() -> PairScoreRule:
    return MIN_TURN_MAX


@registry.misc("spacy_paraphrase.min_turn_top3_mean.v1")
def make_min_turn_top3_mean() -> PairScoreRule:
    return MIN_TURN_TOP3_MEAN


def rule_name(name: str) -> str:
    """The registered name of a rule's name (an old name -> its new one)."""
    return OLD_NAMES.get(name, name)


@lru_cache(maxsize=None)
def _registered_rule(name: str) -> PairScoreRule:
    try:
        rule = registry.misc.get(name)()
    except Exception as err:  # catalogue's RegistryError, or the function failing
        raise ValueError(f"Unknown pair-score rule {name!r}: register it with @registry.misc "
                         f"(e.g. {DEFAULT_RULE!r}): {err}") from None
    if not isinstance(rule, PairScoreRule) or rule.name != name:
        raise ValueError(f"The registered pair-score rule {name!r} must return a PairScoreRule named {name!r}, "
                         f"got {rule!r}")
    return rule


def get_rule(rule: Union[PairScoreRule, str, None]) -> PairScoreRule:
    """The rule of a registered name (old names too), or the rule itself;
    None: ``DEFAULT_RULE``. ValueError for anything else."""
    if isinstance(rule, PairScoreRule):
        return rule
    if rule is None:
        rule = DEFAULT_RULE
    if not isinstance(rule, str):
        raise ValueError(f"A pair-score rule must be a registered name or a PairScoreRule, got {rule!r}")
    return _registered_rule(rule_name(rule))


def turn_maxima(doc: Doc, probs: numpy.ndarray) -> List[Tuple[float, Optional[int]]]:
    """Per turn (first, second): its highest probability and the Doc index of
    the token that has it; ``(0.0, None)`` for a turn with no probability."""
    return [(value, int(numpy.argmax(w)) if w.any() else None) for value, w in MIN_TURN_MAX.turn_values(doc, probs)]


def pair_score_from_probs(doc: Doc, probs: numpy.ndarray, rule: Union[PairScoreRule, str, None] = None) -> float:
    """The pair score of token probabilities under ``rule`` (default: ``DEFAULT_RULE``)."""
    return get_rule(rule)(doc, probs)
