"""The ``paraphrase_spans`` component: it scores every token of a pair Doc
(``make_pair_doc``) with the probability of being part of a paraphrase across
the two turns and writes ``doc.cats[cats_key]`` and ``doc.spans[spans_key]``
through its ``Readout`` (``readout.py``). What it writes and the rules behind
it: README.md, "What the component writes".

Laid out like spaCy's own components: default model config -> the
``paraphrase_spans`` factory (with its score weights) -> the registered scorer
``spacy_paraphrase.paraphrase_spans_scorer.v1`` (``scorer.py``) -> a thin
``TrainablePipe``. Its settings live in ``cfg`` (saved with the pipeline).

Training targets come from the reference Doc: ``doc.spans[spans_key].attrs
["token_targets"]`` (one value in [0, 1] per token, soft or hard) when present,
else 1 for tokens inside the reference spans and 0 elsewhere. The loss is binary
cross-entropy, averaged over the tokens that have wordpieces, plus the optional
pair loss (``pair_loss_weight``, see ``ParaphraseSpans.get_loss``).

The pair score's rule is the factory argument ``pair_score``, a registered
function (``pair_score.py``: ``{"@misc": "spacy_paraphrase.min_turn_max.v1"}``
by default), kept by name in ``cfg["pair_score_rule"]``; a pipeline saved
before it existed loads with ``pair_score.LEGACY_RULE``, the rule it had.
"""
from itertools import islice
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union

import numpy
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Config, Model, Optimizer, set_dropout_rate

from ..pipe_by_length import pipe_by_length
from ..pair_doc import PARAPHRASE_LABEL, SPANS_KEY, get_turns, is_pair_doc
from ..backbones.resolve import record_backbone
from .model import TokenScores
from .pair_score import LEGACY_RULE, PairScoreRule, get_rule
from .readout import SOURCE_LABEL, Readout, fill_unscored_with_sources
from .scorer import make_paraphrase_spans_scorer  # noqa: F401  (registers the scorer)
from .scorer import reference_token_targets

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
        "spans_key": SPANS_KEY,
        "cats_key": PARAPHRASE_LABEL,
        "threshold": 0.5,
        "highlight_threshold": 0.5,
        "highlight_scale": "absolute",
        "max_gap": 0,
        "min_span_length": 0,
        "max_spans": 0,
        "trim_edges": False,
        "vote_share_map": None,
        "pair_loss_weight": 0.0,
        "pair_score": {"@misc": "spacy_paraphrase.min_turn_max.v1"},
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
    max_gap: int,
    min_span_length: int,
    max_spans: int,
    trim_edges: bool,
    vote_share_map: Optional[Dict[str, Any]],
    pair_loss_weight: float,
    pair_score: Union[Callable, str],
    scorer: Optional[Callable],
) -> "ParaphraseSpans":
    """``pair_score``: the pair-score rule, a registered ``PairScoreRule``
    (``pair_score.py``) or its name (``"min_turn_max.v1"``, the name vote-share
    maps recorded before rules were registered, reads as
    ``spacy_paraphrase.min_turn_max.v1``)."""
    return ParaphraseSpans(
        nlp.vocab,
        model,
        name,
        spans_key=spans_key,
        cats_key=cats_key,
        threshold=threshold,
        highlight_threshold=highlight_threshold,
        highlight_scale=highlight_scale,
        max_gap=max_gap,
        min_span_length=min_span_length,
        max_spans=max_spans,
        trim_edges=trim_edges,
        vote_share_map=vote_share_map,
        pair_loss_weight=pair_loss_weight,
        pair_score=pair_score,
        scorer=scorer,
    )


def pair_score_and_token_weights(
    doc: Doc, scores: TokenScores, rule: Union[PairScoreRule, str, None] = None
) -> Tuple[float, numpy.ndarray]:
    """The pair score of the model's output for one Doc, as the readout
    computes it (``rule`` on the filled probabilities), and d score / d p for
    each token's *model* probability: a filled token's weight goes to the
    token whose probability it took (0 for tokens without wordpieces)."""
    probs, sources = fill_unscored_with_sources(doc, scores)
    score, weights = get_rule(rule).score_and_weights(doc, probs)
    model_weights = numpy.zeros((len(doc),), dtype="float64")
    carried = sources >= 0
    numpy.add.at(model_weights, sources[carried], weights[carried])
    return score, model_weights


class ParaphraseSpans(TrainablePipe):
    """Highlight paraphrased words across the two turns of a pair Doc."""

    # how ``tune`` / ``cross-tune`` tune it (``tuning/choice.py``)
    tuned_as = "spans"

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "paraphrase_spans",
        *,
        spans_key: str = SPANS_KEY,
        cats_key: str = PARAPHRASE_LABEL,
        threshold: float = 0.5,
        highlight_threshold: float = 0.5,
        highlight_scale: str = "absolute",
        max_gap: int = 0,
        min_span_length: int = 0,
        max_spans: int = 0,
        trim_edges: bool = False,
        vote_share_map: Optional[Dict[str, Any]] = None,
        pair_loss_weight: float = 0.0,
        pair_score: Union[Callable, str, None] = None,
        scorer: Optional[Callable] = None,
    ) -> None:
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
            "max_gap": max_gap,
            "min_span_length": min_span_length,
            "max_spans": max_spans,
            "trim_edges": trim_edges,
            "vote_share_map": vote_share_map,
            "pair_loss_weight": pair_loss_weight,
            "pair_score_rule": get_rule(pair_score).name,  # type: ignore[arg-type]
        }
        Readout.from_cfg(self.cfg)  # validates the settings (e.g. an unknown highlight_scale)

    @property
    def readout(self) -> Readout:
        """The rule from token probabilities to doc.cats / doc.spans, read from
        ``cfg`` on every call (so a cfg changed after creation, e.g. by
        ``tune``, or loaded from disk, is honoured)."""
        return Readout.from_cfg(self.cfg)

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128) -> Iterator[Doc]:
        """Annotate a stream of pair Docs, in batches of similar length
        (``spacy_paraphrase/pipe_by_length.py``), yielded in stream order."""
        return pipe_by_length(self, stream, batch_size)

    def predict(self, docs: Iterable[Doc]) -> List[TokenScores]:
        docs = list(docs)
        for doc in docs:
            get_turns(doc)
        if not docs:
            return []
        return self.model.predict(docs)

    def set_annotations(self, docs: Iterable[Doc], scores: List[TokenScores]) -> None:
        readout = self.readout
        for doc, doc_scores in zip(docs, scores):
            readout.annotate(doc, doc_scores)

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
        averaged over the pairs. The pair score is the readout's (its rule,
        ``cfg["pair_score_rule"]``, on the filled probabilities it stores), and
        its gradient reaches each token by the rule's weights (d score / d p:
        the one token that sets a max, 1/k on each of a top-k mean's k):
        d loss / d logit_j = (s - t) / (s (1 - s)) * w_j * p_j (1 - p_j), which
        is p_j - t for a max."""
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
            rule = get_rule(self.readout.pair_score_rule)
            pair_total = 0.0
            for i, (eg, doc_scores) in enumerate(zip(examples, scores)):
                target = self._pair_target(eg)
                if target is None:
                    continue
                s, w = pair_score_and_token_weights(eg.predicted, doc_scores, rule)
                if not w.any():  # a turn without probabilities: a constant 0
                    continue
                s = float(numpy.clip(s, eps, 1 - eps))
                pair_total += -(target * numpy.log(s) + (1 - target) * numpy.log(1 - s))
                p = numpy.nan_to_num(doc_scores.probs.astype("float64"))
                d_pair = (s - target) / (s * (1 - s)) * w * p * (1 - p)
                d_logits[i] += (weight * d_pair / len(examples)).astype("float32")
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

    def _load_cfg(self, load: Callable[[], Any], exclude: Iterable[str]) -> Any:
        """Run ``load`` (TrainablePipe's ``from_disk`` / ``from_bytes``, which
        update ``cfg`` from the saved one): a saved cfg without
        ``pair_score_rule`` was saved before rules were named, so its rule is
        ``LEGACY_RULE``, whatever the factory's default is now."""
        if "cfg" in exclude:
            return load()
        own = self.cfg.pop("pair_score_rule", LEGACY_RULE)
        try:
            out = load()
        except BaseException:
            self.cfg.setdefault("pair_score_rule", own)
            raise
        self.cfg.setdefault("pair_score_rule", LEGACY_RULE)
        Readout.from_cfg(self.cfg)  # validates the saved settings (an unknown rule)
        return out

    def from_disk(self, path, *, exclude: Iterable[str] = tuple()) -> "ParaphraseSpans":
        return self._load_cfg(lambda: super(ParaphraseSpans, self).from_disk(path, exclude=exclude), exclude)

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "ParaphraseSpans":
        return self._load_cfg(lambda: super(ParaphraseSpans, self).from_bytes(bytes_data, exclude=exclude), exclude)

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
        record_backbone(nlp)

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
