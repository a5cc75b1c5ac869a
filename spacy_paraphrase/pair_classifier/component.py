"""The ``pair_classifier`` component: one label per pair Doc.

Given a pair Doc (``make_pair_doc``), it classifies the pair as a whole (is
the second turn a paraphrase of the first? which kind of indirect answer is
it?) and writes ``doc.cats[label] = probability`` for every label of its label
set. The model is ``spacy_paraphrase.PairClassifier.v1``: the pair is encoded
as one text pair by the pair-aware transformer, pooled (``[CLS]`` and/or the
mean of each turn's wordpieces) and classified by a softmax over the labels
(``exclusive_classes = true``) or one sigmoid per label.

The default pooling is ``"cls_mean_turns"`` (``[CLS]`` plus the mean of each
turn; the comparison is in studies/research-log.md). The GPU configs use
``"cls"``, the papers' sequence-classification setup.

Settings (all in ``self.cfg``, saved with the pipeline):

``labels``
    The label set, in output order. Empty (default): learned at initialize
    from the training data's reference ``cats`` (sorted), leaving out keys that
    other components of the pipeline own (a ``paraphrase_spans`` component's
    ``cats_key``). Can also be given as ``[initialize.components.NAME] labels``.
``exclusive_classes``
    Must match the model's ``exclusive_classes``.
``positive_label`` / ``threshold``
    For binary tasks (e.g. ``"IS_PARAPHRASE"``): the pair is positive iff
    ``p(positive_label) >= threshold``; the scorer then also reports
    ``{name}_pos_p/r/f``. ``threshold`` can be tuned after training (edit
    ``cfg`` or ``config.cfg``); with non-exclusive labels it is the threshold
    of every label.

Training data: every reference Doc is a pair Doc whose ``cats`` hold a target
probability for *every* label of the set (one-hot, or a soft distribution such
as annotator votes; with exclusive classes they must sum to 1). The converters
(``python -m spacy_paraphrase convert circa|multipit|arpa|pairs``) write that.
A reference lacking a label, or carrying a key that is neither a label nor
another component's ``cats_key``, is an error naming the key.

Loss: cross-entropy against the target distribution (exclusive: ``-sum t log
p``, gradient ``p - t`` on the logits; non-exclusive: binary cross-entropy per
label), averaged over the Docs of the batch.

Label names must not collide with other writers of ``doc.cats`` in the same
pipeline, in particular a ``paraphrase_spans`` component's ``cats_key``
(default ``"PARAPHRASE"``: use e.g. ``IS_PARAPHRASE`` / ``NOT_PARAPHRASE``, as
the converters do). ``initialize`` raises when they collide.
"""
from itertools import islice
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

import numpy
from spacy.language import Language
from spacy.pipeline import TextCategorizer, TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Config, Model, Optimizer, set_dropout_rate
from thinc.types import Floats2d

from ..pipe_by_length import pipe_by_length
from ..pair_doc import get_turns, is_pair_doc
from ..backbones.resolve import record_backbone
from . import model  # noqa: F401  (registers the architecture)
from .scorer import make_pair_classifier_scorer  # noqa: F401  (registers the scorer)
from .scorer import reference_targets

default_model_config = """
[model]
@architectures = "spacy_paraphrase.PairClassifier.v1"
pooling = "cls_mean_turns"
hidden_width = 0
dropout = 0.1
exclusive_classes = true
nO = null

[model.tok2vec]
@architectures = "spacy_paraphrase.PairTransformer.v1"
name = "sentence-transformers/all-MiniLM-L6-v2"
max_length = 0
"""
DEFAULT_MODEL = Config().from_str(default_model_config)["model"]

DEFAULT_SCORE_WEIGHTS = {
    "pair_classifier_acc": 0.5,
    "pair_classifier_macro_f": 0.5,
}

EXCLUSIVE_SUM_TOLERANCE = 1e-3


@Language.factory(
    "pair_classifier",
    assigns=["doc.cats"],
    default_config={
        "model": DEFAULT_MODEL,
        "labels": [],
        "exclusive_classes": True,
        "positive_label": None,
        "threshold": 0.5,
        "scorer": {"@scorers": "spacy_paraphrase.pair_classifier_scorer.v1"},
    },
    default_score_weights=DEFAULT_SCORE_WEIGHTS,
)
def make_pair_classifier(
    nlp: Language,
    name: str,
    model: Model,
    labels: List[str],
    exclusive_classes: bool,
    positive_label: Optional[str],
    threshold: float,
    scorer: Optional[Callable],
) -> "PairClassifier":
    return PairClassifier(
        nlp.vocab,
        model,
        name,
        labels=labels,
        exclusive_classes=exclusive_classes,
        positive_label=positive_label,
        threshold=threshold,
        scorer=scorer,
    )


def _other_cats_owners(nlp: Optional[Language], name: str) -> Dict[str, str]:
    """doc.cats keys written by the other components of ``nlp``: key -> owner."""
    owners: Dict[str, str] = {}
    if nlp is None:
        return owners
    for other_name, pipe in nlp.components:
        if other_name == name:
            continue
        cfg = getattr(pipe, "cfg", None)
        if not isinstance(cfg, dict):
            continue
        if isinstance(cfg.get("cats_key"), str):
            owners[cfg["cats_key"]] = other_name
        if isinstance(pipe, TextCategorizer) or type(pipe).__name__ == "PairClassifier":
            for label in getattr(pipe, "labels", ()) or ():
                if isinstance(label, str):
                    owners.setdefault(label, other_name)
    return owners


class PairClassifier(TrainablePipe):
    """Classify pair Docs as a whole, writing ``doc.cats``."""

    # how ``tune`` / ``cross-tune`` tune it (``tuning/choice.py``)
    tuned_as = "classifier"

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "pair_classifier",
        *,
        labels: Sequence[str] = (),
        exclusive_classes: bool = True,
        positive_label: Optional[str] = None,
        threshold: float = 0.5,
        scorer: Optional[Callable] = None,
    ) -> None:
        model_exclusive = model.attrs.get("exclusive_classes")
        if model_exclusive is not None and bool(model_exclusive) != bool(exclusive_classes):
            raise ValueError(
                f"pair_classifier '{name}': exclusive_classes = {exclusive_classes} but the "
                f"model's exclusive_classes = {model_exclusive}; set both to the same value "
                f"([components.{name}] and [components.{name}.model])."
            )
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold must be in [0, 1], got {threshold}.")
        labels = list(labels)
        if len(set(labels)) != len(labels):
            raise ValueError(f"Duplicate labels in {labels}.")
        self.vocab = vocab
        self.model = model
        self.name = name
        self.scorer = scorer
        self.cfg = {
            "labels": labels,
            "exclusive_classes": bool(exclusive_classes),
            "positive_label": positive_label,
            "threshold": float(threshold),
        }
        # doc.cats keys of other components in the same pipeline (set at
        # initialize): tolerated in reference cats, never used as labels.
        self._foreign_cats: Set[str] = set()

    @property
    def labels(self) -> Tuple[str, ...]:
        return tuple(self.cfg["labels"])

    def add_label(self, label: str) -> int:
        if not isinstance(label, str):
            raise ValueError(f"Labels must be strings, got {label!r}.")
        if label in self.cfg["labels"]:
            return 0
        if self.model.has_dim("nO"):
            raise ValueError(
                f"Cannot add label {label!r} to pair_classifier '{self.name}' after it was "
                "initialized: the label set is fixed once the output layer exists."
            )
        self.cfg["labels"] = list(self.cfg["labels"]) + [label]
        return 1

    # ---- prediction -------------------------------------------------------
    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128) -> Iterator[Doc]:
        """Annotate a stream of pair Docs, in batches of similar length
        (``spacy_paraphrase/pipe_by_length.py``), yielded in stream order."""
        return pipe_by_length(self, stream, batch_size)

    def predict(self, docs: Iterable[Doc]) -> Floats2d:
        docs = list(docs)
        for doc in docs:
            get_turns(doc)
        self._check_ready()
        if not docs:
            return self.model.ops.alloc2f(0, len(self.labels))
        return self.model.predict(docs)

    def set_annotations(self, docs: Iterable[Doc], scores: Floats2d) -> None:
        probs = self.model.ops.to_numpy(scores)
        for doc, row in zip(docs, probs):
            for label, p in zip(self.labels, row):
                doc.cats[label] = float(p)

    def _check_ready(self) -> None:
        if not self.labels or not self.model.has_dim("nO"):
            raise ValueError(
                f"pair_classifier '{self.name}' is not initialized: call nlp.initialize() "
                "with training examples (or set its labels) before using it."
            )

    # ---- training ---------------------------------------------------------
    def _targets(self, examples: Sequence[Example]) -> numpy.ndarray:
        labels = self.labels
        known = set(labels) | self._foreign_cats
        out = numpy.zeros((len(examples), len(labels)), dtype="float32")
        for i, eg in enumerate(examples):
            get_turns(eg.reference)
            unknown = [key for key in eg.reference.cats if key not in known]
            if unknown:
                raise ValueError(
                    f"Reference Doc {i} has cats key(s) {', '.join(map(repr, unknown))} that are "
                    f"not labels of pair_classifier '{self.name}' (labels: {list(labels)}). "
                    "Unknown labels: fix the data, or list them in the component's labels "
                    "(the label set is fixed at initialize)."
                )
            values = reference_targets(eg.reference, labels, f"reference Doc {i}")
            if self.cfg["exclusive_classes"] and abs(float(values.sum()) - 1.0) > EXCLUSIVE_SUM_TOLERANCE:
                raise ValueError(
                    f"The targets of reference Doc {i} sum to {values.sum():.4f}, not 1: with "
                    "exclusive_classes the cats must be a distribution over the labels "
                    f"{list(labels)} (got {dict(eg.reference.cats)})."
                )
            out[i] = values
        return out

    def get_loss(self, examples: Iterable[Example], scores: Floats2d) -> Tuple[float, Floats2d]:
        examples = list(examples)
        targets = self._targets(examples)
        probs = self.model.ops.to_numpy(scores).astype("float32")
        n = max(len(examples), 1)
        eps = 1e-7
        pc = numpy.clip(probs, eps, 1 - eps)
        if self.cfg["exclusive_classes"]:
            loss = float(-(targets * numpy.log(pc)).sum())
        else:
            loss = float(-(targets * numpy.log(pc) + (1 - targets) * numpy.log(1 - pc)).sum())
        d_logits = (probs - targets) / n
        return loss / n, self.model.ops.asarray2f(d_logits)

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
        validate_examples(examples, "PairClassifier.update")
        if not examples:
            return losses
        docs = [eg.predicted for eg in examples]
        for doc in docs:
            get_turns(doc)
        self._check_ready()
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
        labels: Optional[Sequence[str]] = None,
    ) -> None:
        """Set the label set (given, from the config, or learned from the
        reference cats of the examples), check it against the other components
        of ``nlp`` and initialize the model."""
        validate_get_examples(get_examples, "PairClassifier.initialize")
        owners = _other_cats_owners(nlp, self.name)
        self._foreign_cats = set(owners)
        if labels:
            self.cfg["labels"] = list(labels)
        elif not self.cfg["labels"]:
            found = set()
            for eg in get_examples():
                found.update(key for key in eg.reference.cats if key not in owners)
            self.cfg["labels"] = sorted(found)
        if not self.cfg["labels"]:
            raise ValueError(
                f"pair_classifier '{self.name}' has no labels: give training examples whose "
                "reference cats hold the labels, or set `labels` in its config."
            )
        if len(set(self.cfg["labels"])) != len(self.cfg["labels"]):
            raise ValueError(f"Duplicate labels in {self.cfg['labels']}.")
        clashes = {label: owners[label] for label in self.cfg["labels"] if label in owners}
        if clashes:
            desc = ", ".join(f"{label!r} (written by '{owner}')" for label, owner in clashes.items())
            raise ValueError(
                f"Label(s) of pair_classifier '{self.name}' collide with doc.cats keys of other "
                f"components: {desc}. Rename the labels (e.g. IS_PARAPHRASE / NOT_PARAPHRASE) "
                "or change the other component's cats_key."
            )
        positive = self.cfg["positive_label"]
        if positive is not None and positive not in self.cfg["labels"]:
            raise ValueError(
                f"positive_label {positive!r} is not one of the labels {self.cfg['labels']}."
            )
        if self.cfg["exclusive_classes"] and len(self.cfg["labels"]) < 2:
            raise ValueError(
                "exclusive_classes needs at least two labels (a softmax over one label is "
                f"always 1); got {self.cfg['labels']}. Add the negative label or set "
                "exclusive_classes = false."
            )
        n_labels = len(self.cfg["labels"])
        if self.model.has_dim("nO") and self.model.get_dim("nO") != n_labels:
            raise ValueError(
                f"The model's nO = {self.model.get_dim('nO')} but there are {n_labels} labels."
            )
        sample = [
            eg for eg in islice(get_examples(), 8)
            if is_pair_doc(eg.predicted) and is_pair_doc(eg.reference)
        ]
        docs = [eg.predicted for eg in sample]
        Y = self.model.ops.asarray2f(self._targets(sample)) if sample else None
        if not self.model.has_dim("nO"):
            self.model.set_dim("nO", n_labels)
        self.model.initialize(X=docs or None, Y=Y)
        record_backbone(nlp)

    # srsly's JSON reader parses e.g. 0.6 as 0.6000000000000001: give the
    # threshold back as written (JSON holds its shortest repr).
    def _clean_threshold(self) -> None:
        self.cfg["threshold"] = float(f"{float(self.cfg['threshold']):.15g}")

    def from_disk(self, path, *, exclude=tuple()):
        out = super().from_disk(path, exclude=exclude)
        self._clean_threshold()
        return out

    def from_bytes(self, bytes_data, *, exclude=tuple()):
        out = super().from_bytes(bytes_data, exclude=exclude)
        self._clean_threshold()
        return out

    def score(self, examples: Iterable[Example], **kwargs) -> Dict[str, object]:
        validate_examples(examples, "PairClassifier.score")
        kwargs = dict(kwargs)
        kwargs.update(self.cfg)
        kwargs["name"] = self.name
        return self.scorer(examples, **kwargs)
