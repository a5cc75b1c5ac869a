"""The readout: the rule that turns per-token probabilities into
``doc.cats[cats_key]`` and ``doc.spans[spans_key]`` (pair score, highlights,
spans and their attrs), as one small named object, ``Readout``. The contract
is README.md, "What the component writes"; the functions below are the
rule's parts and the documented function forms of it."""
import dataclasses
import numbers
from typing import TYPE_CHECKING, Dict, Iterable, List, Mapping, Optional, Tuple, Union

import numpy
from spacy.tokens import Doc, Span, SpanGroup

from ..pair_doc import PARAPHRASE_LABEL, SPANS_KEY, get_turns
from .decoding import check_decoding, decode_turn
from .pair_score import DEFAULT_RULE, LEGACY_RULE, get_rule
from .vote_share import VoteShareMap, agreement_of_share, check_vote_share_map

if TYPE_CHECKING:
    from .model import TokenScores

SOURCE_LABEL = "SOURCE"
HIGHLIGHT_SCALES = ("absolute", "turn_max")


def fill_unscored_with_sources(doc: Doc, scores: "TokenScores") -> Tuple[numpy.ndarray, numpy.ndarray]:
    """``fill_unscored`` and, per token, the Doc index of the scored token
    whose probability it carries (itself for a token with wordpieces, the
    lower neighbour for a filled one; -1 for a 0 at a turn's edge, a cut token
    and a token outside the turns): how the pair loss moves a filled token's
    weight onto the model's output."""
    probs = numpy.full((len(doc),), numpy.nan, dtype="float32")
    sources = numpy.full((len(doc),), -1, dtype="int64")
    for turn in get_turns(doc):
        p = scores.probs[turn.start : turn.end]
        has = scores.n_pieces[turn.start : turn.end] > 0
        cut = scores.cut[turn.start : turn.end]
        out = numpy.where(has, p, numpy.nan).astype("float32")
        n = len(out)
        positions = numpy.arange(n)
        src = numpy.where(has, positions, -1)
        if not has.all():
            # the nearest probability before and after each token (NaN: none)
            before = numpy.maximum.accumulate(numpy.where(has, positions, -1))
            after = numpy.minimum.accumulate(numpy.where(has, positions, n)[::-1])[::-1]
            prev = numpy.where(before >= 0, out[numpy.maximum(before, 0)], numpy.nan)
            nxt = numpy.where(after < n, out[numpy.minimum(after, n - 1)], numpy.nan)
            edge = numpy.isnan(prev) | numpy.isnan(nxt)
            fill = numpy.where(edge, 0.0, numpy.fmin(prev, nxt))
            out = numpy.where(has, out, fill).astype("float32")
            with numpy.errstate(invalid="ignore"):
                lower = numpy.where(prev <= nxt, before, after)
            src = numpy.where(has, positions, numpy.where(edge, -1, lower))
            out[cut] = numpy.nan
            src[cut] = -1
        probs[turn.start : turn.end] = out
        sources[turn.start : turn.end] = numpy.where(src >= 0, turn.start + src, -1)
    return probs, sources


def fill_unscored(doc: Doc, scores: "TokenScores") -> numpy.ndarray:
    """Token probabilities for the whole Doc, applying the documented rule to
    tokens without wordpieces (the lower of the nearest probabilities before
    and after in the turn; 0 at a turn's edge). NaN for cut tokens and tokens
    outside turns. What the readout stores and the pair score reads, in
    training as in inference."""
    return fill_unscored_with_sources(doc, scores)[0]


def span_means(probs: numpy.ndarray, spans: List[Span]) -> List[float]:
    """The mean probability of each span, NaN left out (NaN for a span with
    none): ``numpy.nanmean`` per span, as one cumulative sum for the Doc."""
    if not spans:
        return []
    missing = numpy.isnan(probs)
    totals = numpy.concatenate([[0.0], numpy.cumsum(numpy.where(missing, 0.0, probs), dtype="float64")])
    counts = numpy.concatenate([[0], numpy.cumsum(~missing)])
    starts = numpy.fromiter((s.start for s in spans), dtype="int64", count=len(spans))
    ends = numpy.fromiter((s.end for s in spans), dtype="int64", count=len(spans))
    n = counts[ends] - counts[starts]
    with numpy.errstate(invalid="ignore", divide="ignore"):
        means = (totals[ends] - totals[starts]) / n
    return numpy.where(n > 0, means.astype("float32"), numpy.nan).astype(float).tolist()


def check_highlight_scale(scale: str) -> str:
    if scale not in HIGHLIGHT_SCALES:
        raise ValueError(f"Unknown highlight_scale {scale!r}: choose one of {HIGHLIGHT_SCALES}")
    return scale


def highlight_flags(
    doc: Doc, probs: numpy.ndarray, threshold: float, scale: str = "absolute"
) -> numpy.ndarray:
    """Which tokens of a pair Doc are highlighted (bool per token): probability
    >= ``threshold`` (``scale="absolute"``), or >= ``threshold`` times the
    highest probability in the token's turn (``scale="turn_max"``; a turn whose
    maximum is not > 0 gets nothing). Tokens without probability (NaN) and
    tokens outside the turns are never highlighted."""
    check_highlight_scale(scale)
    p = numpy.nan_to_num(numpy.asarray(probs, dtype="float32"), nan=-1.0)
    if scale == "absolute":
        return p >= threshold
    flags = numpy.zeros((len(doc),), dtype=bool)
    for turn in get_turns(doc):
        seg = p[turn.start : turn.end]
        top = float(seg.max()) if len(seg) else -1.0
        if top > 0:
            flags[turn.start : turn.end] = seg >= threshold * top
    return flags


def span_token_flags(doc: Doc, spans: Iterable[Span]) -> numpy.ndarray:
    """Which tokens of ``doc`` lie inside any of ``spans`` (bool per token)."""
    flags = numpy.zeros((len(doc),), dtype=bool)
    for span in spans:
        flags[span.start : span.end] = True
    return flags


def token_probs(doc: Doc, spans_key: str = SPANS_KEY) -> numpy.ndarray:
    """The stored per-token probabilities of a processed pair Doc."""
    group = doc.spans.get(spans_key)
    if group is None or "token_probs" not in group.attrs:
        raise ValueError(
            f"doc.spans['{spans_key}'] has no token probabilities: run the "
            "paraphrase_spans component (with this spans_key) on the Doc first."
        )
    return numpy.asarray(group.attrs["token_probs"], dtype="float32")


@dataclasses.dataclass(frozen=True)
class Readout:
    """How token probabilities become ``doc.cats[cats_key]`` and
    ``doc.spans[spans_key]``: a pair passes when its pair score reaches
    ``threshold``; the tokens of a passing pair that ``highlight_flags``
    selects (``highlight_threshold`` on ``highlight_scale``) become spans
    (README.md, "What the component writes"). Immutable: change a setting with
    ``replace``. The ``paraphrase_spans`` component keeps these settings in its
    ``cfg`` under the same keys and builds its readout from there.
    ``pair_score_rule``: the registered name of the pair-score rule
    (``pair_score.py``)."""

    threshold: float = 0.5
    highlight_threshold: float = 0.5
    highlight_scale: str = "absolute"
    spans_key: str = SPANS_KEY
    cats_key: str = PARAPHRASE_LABEL
    max_gap: int = 0
    min_span_length: int = 0
    max_spans: int = 0
    trim_edges: bool = False
    vote_share_map: Optional[Dict[str, object]] = None
    pair_score_rule: str = DEFAULT_RULE

    def __post_init__(self) -> None:
        check_highlight_scale(self.highlight_scale)
        object.__setattr__(self, "pair_score_rule", get_rule(self.pair_score_rule).name)
        for name in ("max_gap", "min_span_length", "max_spans"):
            value = getattr(self, name)
            # a tuned value may come back as a whole float (2.0): keep it an int
            if isinstance(value, float) and value.is_integer():
                object.__setattr__(self, name, int(value))
        check_decoding(self.max_gap, self.min_span_length, self.max_spans, self.trim_edges)
        check_vote_share_map(self.vote_share_map, rule=self.pair_score_rule)
        for name in ("threshold", "highlight_threshold"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise ValueError(f"Readout {name} must be a number, got {value!r}")
        for name in ("spans_key", "cats_key"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise ValueError(f"Readout {name} must be a non-empty string, got {value!r}")

    @classmethod
    def from_cfg(cls, cfg: Mapping[str, object]) -> "Readout":
        """The readout of a component's ``cfg`` (or any mapping with the same
        keys). Missing keys take the defaults above (pipelines saved before
        ``highlight_scale`` existed read as ``"absolute"``), but a missing
        ``pair_score_rule`` is ``pair_score.LEGACY_RULE``, the rule of every
        pipeline saved before rules were named; other keys, e.g.
        ``pair_loss_weight``, are ignored."""
        return cls(**{"pair_score_rule": LEGACY_RULE, **{key: cfg[key] for key in READOUT_KEYS if key in cfg}})

    def to_cfg(self) -> Dict[str, object]:
        """The settings as the component's ``cfg`` keys."""
        return {key: getattr(self, key) for key in READOUT_KEYS}

    def replace(self, **changes: object) -> "Readout":
        """A copy with some settings changed, validated like a new one."""
        unknown = sorted(set(changes) - set(READOUT_KEYS))
        if unknown:
            raise ValueError(f"Unknown readout setting(s) {unknown}: choose from {READOUT_KEYS}")
        return dataclasses.replace(self, **changes)

    def pair_score(self, doc: Doc, probs: numpy.ndarray) -> float:
        """The pair score of token probabilities under ``pair_score_rule``
        (default: min over the turns of the max probability). A producer whose pair
        score is not a function of its token probabilities (the LLM task: the
        share of samples answering "yes") passes it to ``annotate``."""
        return get_rule(self.pair_score_rule)(doc, probs)

    def is_paraphrase(self, pair_score: float) -> bool:
        """The pair's decision: whether its pair score reaches ``threshold``
        (a NaN score, no score, never does). ``annotate`` and the annotate
        records decide with this."""
        return bool(pair_score >= self.threshold)

    def margin(self, pair_score: float) -> float:
        """How far the decision is from flipping: pair score - ``threshold``."""
        return float(pair_score - self.threshold)

    def highlight_spans(self, doc: Doc, probs: numpy.ndarray) -> List[Span]:
        """The spans of the highlighted tokens (``highlight_flags`` on
        ``highlight_threshold`` / ``highlight_scale``) decoded into phrases by
        ``max_gap``, ``trim_edges``, ``min_span_length`` and ``max_spans``
        (``decoding.py``; the defaults keep every maximal run: the paper's
        rule), SOURCE in the first turn, PARAPHRASE in the second."""
        flags = highlight_flags(doc, probs, self.highlight_threshold, self.highlight_scale)
        spans: List[Span] = []
        for label, turn in zip((SOURCE_LABEL, PARAPHRASE_LABEL), get_turns(doc)):
            spans.extend(decode_turn(
                doc, flags, probs, turn.start, turn.end, label, max_gap=self.max_gap,
                min_span_length=self.min_span_length, max_spans=self.max_spans, trim_edges=self.trim_edges,
            ))
        return spans

    def span_flags(self, doc: Doc, probs: numpy.ndarray) -> numpy.ndarray:
        """Which tokens are highlighted (bool per token): those inside the
        decoded spans (``highlight_spans``), whether or not the pair passes
        (the scorer's Jaccard reads this)."""
        return span_token_flags(doc, self.highlight_spans(doc, probs))

    def vote_share(self, doc: Doc, probs: numpy.ndarray, pair_score: float) -> float:
        """The predicted share of annotators who would call the pair a
        paraphrase: ``vote_share_map`` applied to the pair's features
        (``vote_share.py``); without a map, the pair score itself."""
        if self.vote_share_map is None:
            return float(pair_score)
        return VoteShareMap.from_cfg(self.vote_share_map).predict_doc(doc, probs, self.pair_score_rule)

    def annotate(
        self,
        doc: Doc,
        probs: Union[numpy.ndarray, "TokenScores"],
        *,
        n_cut: Optional[int] = None,
        n_windows: Optional[int] = None,
        pair_score: Optional[float] = None,
    ) -> None:
        """Write ``doc.cats[cats_key]`` and ``doc.spans[spans_key]`` with all
        its attrs. ``probs``: one probability per token (NaN = none), or the
        tagger's ``TokenScores`` for the Doc, to which the rule for tokens
        without wordpieces (``fill_unscored``) is applied first and which then
        gives ``n_cut`` (its cut tokens) and ``n_windows``. Otherwise ``n_cut``
        defaults to 0 and ``n_windows`` to 1. ``pair_score``: the pair's score
        when its producer has its own (NaN: none, nothing passes); None: the
        one of ``probs`` (``pair_score``)."""
        from .model import TokenScores  # spacy-transformers: not needed to read stored probabilities

        if isinstance(probs, TokenScores):
            scores = probs
            probs = fill_unscored(doc, scores)
            n_cut = int(scores.cut.sum()) if n_cut is None else n_cut
            n_windows = scores.n_windows if n_windows is None else n_windows
        n_cut = 0 if n_cut is None else n_cut
        n_windows = 1 if n_windows is None else n_windows
        pair_score = self.pair_score(doc, probs) if pair_score is None else float(pair_score)
        spans = self.highlight_spans(doc, probs) if self.is_paraphrase(pair_score) else []
        group = SpanGroup(doc, name=self.spans_key, spans=spans)
        group.attrs["scores"] = span_means(probs, spans)
        group.attrs["token_probs"] = probs
        group.attrs["pair_score"] = pair_score
        # The predicted share of annotators calling the pair a paraphrase, the
        # chance that two such annotators agree, and how far the decision is
        # from flipping (README.md, "What the component writes").
        share = self.vote_share(doc, probs, pair_score)
        group.attrs["vote_share"] = share
        group.attrs["agreement"] = agreement_of_share(share)
        group.attrs["margin"] = self.margin(pair_score)
        group.attrs["truncated"] = bool(n_cut > 0)
        group.attrs["n_cut_tokens"] = int(n_cut)
        group.attrs["n_windows"] = int(n_windows)
        doc.spans[self.spans_key] = group
        doc.cats[self.cats_key] = pair_score

    def token_probs(self, doc: Doc) -> numpy.ndarray:
        """The probabilities stored on a processed Doc under ``spans_key``."""
        return token_probs(doc, self.spans_key)

    def decision(self, doc: Doc) -> bool:
        """A processed Doc's decision: ``is_paraphrase`` of its stored pair
        score, ``doc.cats[cats_key]``."""
        return self.is_paraphrase(doc.cats[self.cats_key])

    def highlighted(self, doc: Doc) -> numpy.ndarray:
        """Which tokens of a processed Doc are highlighted (bool per token):
        those inside its spans, ``doc.spans[spans_key]`` (none unless the
        pair passed; KeyError when the Doc has no such group)."""
        return span_token_flags(doc, doc.spans[self.spans_key])

    def reannotate(self, doc: Doc) -> None:
        """Rewrite the annotations of a processed Doc with this readout, from
        its stored ``token_probs`` (keeping its ``pair_score``, ``n_cut_tokens``
        and ``n_windows``): how a threshold sweep costs one pipeline run. The
        pair score does not depend on the readout's settings, so the stored
        one is kept, whoever produced it (an LLM's vote share too)."""
        probs = self.token_probs(doc)
        attrs = doc.spans[self.spans_key].attrs
        self.annotate(
            doc,
            probs,
            n_cut=int(attrs.get("n_cut_tokens", 0)),
            n_windows=int(attrs.get("n_windows", 1)),
            pair_score=attrs.get("pair_score"),
        )


READOUT_KEYS = tuple(f.name for f in dataclasses.fields(Readout))
# The decoding settings of the paper's plain rule: every maximal run of
# highlighted tokens is a span.
PLAIN_DECODING = {"max_gap": 0, "min_span_length": 0, "max_spans": 0, "trim_edges": False}


def set_highlight_scale(nlp, pipe_name: Optional[str], scale: str) -> List[str]:
    """Set ``highlight_scale`` (cfg and ``config.cfg``) of the component
    ``pipe_name``, or of every component that has the setting
    (``pipe_name=None``); "" keeps the pipeline's own. Returns the names set.
    ValueError on an unknown scale or when no component has the setting."""
    if not scale:
        return []
    check_highlight_scale(scale)
    names = [pipe_name] if pipe_name else nlp.pipe_names
    names = [n for n in names if "highlight_scale" in getattr(nlp.get_pipe(n), "cfg", {})]
    if not names:
        which = f"component {pipe_name!r} has" if pipe_name else "component has"
        raise ValueError(f"No {which} a highlight_scale setting")
    for name in names:
        nlp.get_pipe(name).cfg["highlight_scale"] = scale
        nlp.get_pipe_config(name)["highlight_scale"] = scale
    return names
