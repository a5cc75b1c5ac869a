"""The ``paraphrase_spans`` component.

Given a pair Doc (``make_pair_doc``), it scores every token with the
probability of being part of a paraphrase across the two turns and writes:

``doc.spans[spans_key]`` (default ``"paraphrase"``)
    Maximal runs of highlighted tokens (see ``highlight_scale``), labelled
    ``SOURCE`` (first turn) and ``PARAPHRASE`` (second turn), written only
    when the pair passes ``threshold``. Its ``attrs``:

    - ``"scores"``: one score per span, the mean probability of its tokens.
    - ``"token_probs"``: float32 array of length ``len(doc)``, the probability of
      every token (NaN = no probability: the token was cut from an over-long
      pair, or lies outside both turns). Always written, whether or not the
      pair passes, so visualizers and the scorer can read it.
    - ``"pair_score"``: the pair score (same as ``doc.cats[cats_key]``).
    - ``"vote_share"``: the pair score read as the predicted share of
      annotators who would call the pair a paraphrase (meaningful as such for
      models trained on soft targets, see ``--mode soft``), and
      ``"agreement"`` = ``|2 * vote_share - 1|``: 1 for a clear call either way,
      0 for a contested pair. Sort by it to separate clear from contested pairs.
    - ``"n_windows"``: how many sequences the pair was encoded as: 1, or more
      for a pair longer than the transformer's maximum (see
      ``pair_transformer.pair_windows``; a token's vector is then the mean over
      every window containing it).
    - ``"truncated"``: True when tokens were cut even so (only a single token
      longer than a whole window); ``"n_cut_tokens"``: how many tokens got no
      wordpiece at all because of it.

``doc.cats[cats_key]`` (default ``"PARAPHRASE"``)
    The paper's decision rule as a score: the minimum over the two turns of
    the maximum token probability in that turn. "score >= threshold" means
    "some word in *both* turns reaches the threshold".

Which tokens are highlighted (``highlight_scale``):

``"absolute"`` (default, the paper's rule)
    every token with probability >= ``highlight_threshold``.
``"turn_max"``
    every token with probability >= ``highlight_threshold`` times the highest
    probability in its turn. A model trained on soft targets (``convert
    contextdep --mode soft``) estimates the share of *all* annotators who
    highlight a word, i.e. the pair's paraphrase vote share times the share of
    the paraphrase-finding annotators; the gold highlight is the latter
    reaching 0.5. Dividing by the turn's maximum removes the pair's vote share,
    so one threshold means the same on clear and on contested pairs. The pair
    score and ``token_probs`` are not affected. A turn whose maximum is 0 (or
    that has no probability) gets no highlight.

Tokens without wordpieces (whitespace tokens, e.g. those standing for
ContextDeP's empty words, and tokens the tokenizer maps to nothing) get the
minimum of the probabilities of the nearest scored tokens before and after them
in the same turn (0.0 when there is none on one side), so they continue a
highlighted run but never start or extend one. They are excluded from the loss.

Training targets come from the reference Doc: ``doc.spans[spans_key].attrs
["token_targets"]`` (one value in [0, 1] per token, soft or hard) when present,
else 1 for tokens inside the reference spans and 0 elsewhere. The loss is binary
cross-entropy, averaged over the tokens that have wordpieces.
"""
from itertools import islice
from typing import Callable, Dict, Iterable, List, Optional, Tuple

import numpy
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc, Span, SpanGroup
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.util import registry
from spacy.vocab import Vocab
from thinc.api import Config, Model, Optimizer, set_dropout_rate

from .pair_doc import get_turns, is_pair_doc, runs_to_spans
from .paraphrase_tagger import TokenScores

SOURCE_LABEL = "SOURCE"
PARAPHRASE_LABEL = "PARAPHRASE"
HIGHLIGHT_SCALES = ("absolute", "turn_max")

default_model_config = """
[model]
@architectures = "spacy_paraphrase.ParaphraseTagger.v1"
dropout = 0.1
grad_factor = 1.0

[model.tok2vec]
@architectures = "spacy_paraphrase.PairTransformer.v1"
name = "sentence-transformers/all-MiniLM-L6-v2"
max_length = 0
"""
DEFAULT_MODEL = Config().from_str(default_model_config)["model"]

DEFAULT_SCORE_WEIGHTS = {
    "paraphrase_spans_pair_acc": 0.25,
    "paraphrase_spans_pair_macro_f": 0.25,
    "paraphrase_spans_jaccard_first": 0.15,
    "paraphrase_spans_jaccard_second": 0.15,
    "paraphrase_spans_token_f": 0.2,
    "paraphrase_spans_pair_f": 0.0,
    "paraphrase_spans_pair_p": 0.0,
    "paraphrase_spans_pair_r": 0.0,
}


@Language.factory(
    "paraphrase_spans",
    assigns=["doc.spans", "doc.cats"],
    default_config={
        "model": DEFAULT_MODEL,
        "spans_key": "paraphrase",
        "cats_key": "PARAPHRASE",
        "threshold": 0.5,
        "highlight_threshold": 0.5,
        "highlight_scale": "absolute",
        "pair_loss_weight": 0.0,
        "scorer": {"@scorers": "spacy_paraphrase.paraphrase_spans_scorer.v1"},
    },
    default_score_weights=DEFAULT_SCORE_WEIGHTS,
)
def make_paraphrase_spans(
    nlp: Language,
    name: str,
    model: Model,
    spans_key: str,
    cats_key: str,
    threshold: float,
    highlight_threshold: float,
    highlight_scale: str,
    pair_loss_weight: float,
    scorer: Optional[Callable],
) -> "ParaphraseSpans":
    return ParaphraseSpans(
        nlp.vocab,
        model,
        name,
        spans_key=spans_key,
        cats_key=cats_key,
        threshold=threshold,
        highlight_threshold=highlight_threshold,
        highlight_scale=highlight_scale,
        pair_loss_weight=pair_loss_weight,
        scorer=scorer,
    )


def fill_unscored(doc: Doc, scores: TokenScores) -> numpy.ndarray:
    """Token probabilities for the whole Doc, applying the documented rule to
    tokens without wordpieces. NaN for cut tokens and tokens outside turns."""
    probs = numpy.full((len(doc),), numpy.nan, dtype="float32")
    for turn in get_turns(doc):
        p = scores.probs[turn.start : turn.end]
        has = scores.n_pieces[turn.start : turn.end] > 0
        cut = scores.cut[turn.start : turn.end]
        out = numpy.where(has, p, numpy.nan).astype("float32")
        if not has.all():
            n = len(out)
            prev = numpy.full((n,), numpy.nan, dtype="float32")
            nxt = numpy.full((n,), numpy.nan, dtype="float32")
            last = numpy.nan
            for i in range(n):
                if has[i]:
                    last = out[i]
                prev[i] = last
            last = numpy.nan
            for i in range(n - 1, -1, -1):
                if has[i]:
                    last = out[i]
                nxt[i] = last
            fill = numpy.fmin(prev, nxt)
            fill = numpy.where(numpy.isnan(prev) | numpy.isnan(nxt), 0.0, fill)
            out = numpy.where(has, out, fill).astype("float32")
            out[cut] = numpy.nan
        probs[turn.start : turn.end] = out
    return probs


def _pair_score_token(doc: Doc, scores: TokenScores) -> Optional[int]:
    """The token whose probability is the pair score (min over turns of the
    max over the turn's tokens with wordpieces), or None."""
    best = []
    for turn in get_turns(doc):
        has = (scores.n_pieces[turn.start : turn.end] > 0) & ~scores.cut[turn.start : turn.end]
        if not has.any():
            return None
        p = numpy.where(has, scores.probs[turn.start : turn.end], -1.0)
        j = int(numpy.argmax(p))
        best.append((float(p[j]), turn.start + j))
    return min(best)[1]


def pair_score_from_probs(doc: Doc, probs: numpy.ndarray) -> float:
    """min over the two turns of the max token probability (0 for a turn with
    no probability at all)."""
    best = []
    for turn in get_turns(doc):
        p = probs[turn.start : turn.end]
        p = p[~numpy.isnan(p)]
        best.append(float(p.max()) if len(p) else 0.0)
    return min(best)


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


def highlight_runs(
    doc: Doc, probs: numpy.ndarray, threshold: float, scale: str = "absolute"
) -> List[Span]:
    """Maximal runs of highlighted tokens (``highlight_flags``) within each
    turn, labelled SOURCE (first turn) and PARAPHRASE (second turn)."""
    flags = highlight_flags(doc, probs, threshold, scale)
    spans: List[Span] = []
    for label, turn in zip((SOURCE_LABEL, PARAPHRASE_LABEL), get_turns(doc)):
        spans.extend(runs_to_spans(doc, flags, turn.start, turn.end, label))
    return spans


def write_paraphrase_annotations(
    doc: Doc,
    probs: numpy.ndarray,
    *,
    spans_key: str,
    cats_key: str,
    threshold: float,
    highlight_threshold: float,
    highlight_scale: str = "absolute",
    n_cut: int = 0,
    n_windows: int = 1,
) -> None:
    """Write spans, span scores, token probabilities and the pair score."""
    pair_score = pair_score_from_probs(doc, probs)
    spans = (
        highlight_runs(doc, probs, highlight_threshold, highlight_scale)
        if pair_score >= threshold
        else []
    )
    group = SpanGroup(doc, name=spans_key, spans=spans)
    group.attrs["scores"] = [float(numpy.nanmean(probs[s.start : s.end])) for s in spans]
    group.attrs["token_probs"] = probs
    group.attrs["pair_score"] = pair_score
    # The pair score read as the predicted share of annotators who would call
    # the pair a paraphrase (calibrated to that share by soft training), and
    # how clear-cut that call is: 1.0 = all would agree, 0.0 = an even split.
    group.attrs["vote_share"] = pair_score
    group.attrs["agreement"] = abs(2.0 * pair_score - 1.0)
    group.attrs["truncated"] = bool(n_cut > 0)
    group.attrs["n_cut_tokens"] = int(n_cut)
    group.attrs["n_windows"] = int(n_windows)
    doc.spans[spans_key] = group
    doc.cats[cats_key] = pair_score


def token_probs(doc: Doc, spans_key: str = "paraphrase") -> numpy.ndarray:
    """The stored per-token probabilities of a processed pair Doc."""
    group = doc.spans.get(spans_key)
    if group is None or "token_probs" not in group.attrs:
        raise ValueError(
            f"doc.spans['{spans_key}'] has no token probabilities: run the "
            "paraphrase_spans component (with this spans_key) on the Doc first."
        )
    return numpy.asarray(group.attrs["token_probs"], dtype="float32")


def reference_token_targets(doc: Doc, spans_key: str) -> numpy.ndarray:
    """Per-token training targets in [0, 1] from a reference (gold) Doc."""
    if spans_key not in doc.spans:
        raise ValueError(
            f"The reference Doc has no doc.spans['{spans_key}'] with the gold "
            "highlights (an empty group means 'no highlight'). Convert data with "
            "`python -m spacy_paraphrase convert` or set the spans yourself."
        )
    group = doc.spans[spans_key]
    if "token_targets" in group.attrs:
        targets = numpy.asarray(group.attrs["token_targets"], dtype="float32")
        if targets.shape != (len(doc),):
            raise ValueError(
                f"attrs['token_targets'] has {targets.size} values for a Doc of {len(doc)} tokens."
            )
        if numpy.isnan(targets).any() or (targets < 0).any() or (targets > 1).any():
            raise ValueError("attrs['token_targets'] must hold values in [0, 1].")
        return targets
    targets = numpy.zeros((len(doc),), dtype="float32")
    for span in group:
        targets[span.start : span.end] = 1.0
    return targets


class ParaphraseSpans(TrainablePipe):
    """Highlight paraphrased words across the two turns of a pair Doc."""

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "paraphrase_spans",
        *,
        spans_key: str = "paraphrase",
        cats_key: str = "PARAPHRASE",
        threshold: float = 0.5,
        highlight_threshold: float = 0.5,
        highlight_scale: str = "absolute",
        pair_loss_weight: float = 0.0,
        scorer: Optional[Callable] = None,
    ) -> None:
        check_highlight_scale(highlight_scale)
        self.vocab = vocab
        self.model = model
        self.name = name
        self.scorer = scorer
        self.cfg = {
            "spans_key": spans_key,
            "cats_key": cats_key,
            "threshold": threshold,
            "highlight_threshold": highlight_threshold,
            "highlight_scale": highlight_scale,
            "pair_loss_weight": pair_loss_weight,
        }

    def predict(self, docs: Iterable[Doc]) -> List[TokenScores]:
        docs = list(docs)
        for doc in docs:
            get_turns(doc)
        if not docs:
            return []
        return self.model.predict(docs)

    def set_annotations(self, docs: Iterable[Doc], scores: List[TokenScores]) -> None:
        for doc, doc_scores in zip(docs, scores):
            probs = fill_unscored(doc, doc_scores)
            write_paraphrase_annotations(
                doc,
                probs,
                spans_key=self.cfg["spans_key"],
                cats_key=self.cfg["cats_key"],
                threshold=self.cfg["threshold"],
                highlight_threshold=self.cfg["highlight_threshold"],
                highlight_scale=self.cfg.get("highlight_scale", "absolute"),
                n_cut=int(doc_scores.cut.sum()),
                n_windows=doc_scores.n_windows,
            )

    def _targets(self, eg: Example) -> numpy.ndarray:
        ref_targets = reference_token_targets(eg.reference, self.cfg["spans_key"])
        pred, ref = eg.predicted, eg.reference
        if len(pred) == len(ref) and all(a.text == b.text for a, b in zip(pred, ref)):
            return ref_targets
        # Different tokenization: average the targets of the aligned gold tokens.
        x2y = eg.alignment.x2y
        out = numpy.zeros((len(pred),), dtype="float32")
        for i in range(len(pred)):
            idx = x2y[i].dataXd
            if len(idx):
                out[i] = float(ref_targets[numpy.asarray(idx)].mean())
        return out

    def _pair_target(self, eg: Example) -> Optional[float]:
        value = eg.reference.cats.get(self.cfg["cats_key"])
        return None if value is None else float(value)

    def get_loss(
        self, examples: Iterable[Example], scores: List[TokenScores]
    ) -> Tuple[float, List[numpy.ndarray]]:
        """Binary cross-entropy of every token with wordpieces against its
        target (mean over tokens); with ``pair_loss_weight`` > 0, plus that
        weight times the cross-entropy of the pair score against the pair's
        target (``reference.cats[cats_key]``: the vote share for soft data),
        averaged over the pairs. The pair score is a min of maxes, so its
        gradient goes to the one token that sets it."""
        examples = list(examples)
        eps = 1e-7
        token_grads = []
        total = 0.0
        count = 0
        for eg, doc_scores in zip(examples, scores):
            targets = self._targets(eg)
            mask = (doc_scores.n_pieces > 0) & ~doc_scores.cut
            p = numpy.where(mask, doc_scores.probs, 0.5).astype("float32")
            d = numpy.where(mask, p - targets, 0.0).astype("float32")
            pc = numpy.clip(p, eps, 1 - eps)
            bce = -(targets * numpy.log(pc) + (1 - targets) * numpy.log(1 - pc))
            total += float(bce[mask].sum())
            count += int(mask.sum())
            token_grads.append(d)
        norm = max(count, 1)
        loss = total / norm
        d_logits = [d / norm for d in token_grads]
        weight = float(self.cfg.get("pair_loss_weight", 0.0))
        if weight > 0:
            pair_total = 0.0
            for i, (eg, doc_scores) in enumerate(zip(examples, scores)):
                target = self._pair_target(eg)
                j = _pair_score_token(eg.predicted, doc_scores)
                if target is None or j is None:
                    continue
                pj = float(numpy.clip(doc_scores.probs[j], eps, 1 - eps))
                pair_total += -(target * numpy.log(pj) + (1 - target) * numpy.log(1 - pj))
                d_logits[i][j] += weight * (pj - target) / len(examples)
            loss += weight * pair_total / max(len(examples), 1)
        return loss, [self.model.ops.asarray1f(d) for d in d_logits]

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "ParaphraseSpans.update")
        docs = [eg.predicted for eg in examples]
        if not docs:
            return losses
        set_dropout_rate(self.model, drop)
        scores, backprop = self.model.begin_update(docs)
        loss, d_scores = self.get_loss(examples, scores)
        backprop(d_scores)
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
    ) -> None:
        validate_get_examples(get_examples, "ParaphraseSpans.initialize")
        # Pair Docs from the examples let layers infer shapes; without any
        # (a bare nlp.initialize() passes a dummy non-pair Doc) the transformer
        # gives the width on its own.
        docs = [eg.predicted for eg in islice(get_examples(), 4) if is_pair_doc(eg.predicted)]
        self.model.initialize(X=docs or None)

    def score(self, examples: Iterable[Example], **kwargs) -> Dict[str, float]:
        validate_examples(examples, "ParaphraseSpans.score")
        kwargs = dict(kwargs)
        kwargs.update(self.cfg)
        kwargs["name"] = self.name
        return self.scorer(examples, **kwargs)

    def add_label(self, label: str) -> int:
        raise NotImplementedError("paraphrase_spans has fixed labels (SOURCE, PARAPHRASE).")

    @property
    def labels(self) -> Tuple[str, ...]:
        return (SOURCE_LABEL, PARAPHRASE_LABEL)
