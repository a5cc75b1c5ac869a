"""The tuning interface: what ``tune`` and ``cross-tune`` ask of a
component whose decision settings can be tuned on pair Docs.

A tunable component has a method ``tuning(name) -> Tuning``:
``paraphrase_spans`` (and the baseline and ``paraphrase_llm`` in its place)
returns a ``tuning.spans.SpanTuning``, ``pair_classifier`` a
``tuning.classifier.ClassifierTuning``. A ``Tuning`` says which keys it
tunes, refuses the options it has no use for (``check``), tunes one key on
processed pair Docs (``find``) and estimates tuned scores on unseen pairs
(``cross_tune``). The commands (``cli/tune.py``, ``cli/cross_tune.py``) hold
no component branches: they load, pick the component (``choose_tuning``),
process the pairs once and print what the ``Tuning`` returns.

Every method works on Docs the pipeline has processed: a sweep rewrites the
annotations from what the component stored, so it costs one pipeline run.
Problems a user can fix (an option the component does not take, a score key
that does not exist, settings that decide nothing) raise ``TuningError``.
"""
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from spacy.training import Example

# rows of a table: (header, rows)
Table = Tuple[Sequence[str], List[Sequence[str]]]


class TuningError(ValueError):
    """A tuning request the component cannot carry out; the message says why."""


@dataclass
class Found:
    """What ``Tuning.find`` chose: the cfg ``settings`` to save, the tables
    and the line to show, and the ``report`` that ``--output`` writes."""

    key: str
    settings: Dict[str, object]
    report: Dict[str, object]
    tables: List[Table] = field(default_factory=list)
    summary: str = ""


class Tuning(ABC):
    """The tunable settings of the component ``name`` (``pipe``)."""

    # the component kind, as messages name it
    kind: str = ""
    # the --key values ``find`` tunes (the first is the default)
    keys: Tuple[str, ...] = ()
    # the scores (without the ``{name}_`` prefix) a cross-tuned estimate shows
    shown: Tuple[str, ...] = ()

    def __init__(self, name: str, pipe) -> None:
        self.name = name
        self.pipe = pipe

    @abstractmethod
    def check(
        self,
        key: str = "threshold",
        *,
        highlight_scale: str = "",
        highlight_scores_key: str = "",
        n_quantiles: Optional[int] = None,
    ) -> None:
        """Raise ``TuningError`` for a key or an option the component has no
        use for (before the pipeline runs)."""

    @abstractmethod
    def find(
        self,
        examples: Sequence[Example],
        key: str,
        values: Sequence[float],
        scores_key: str = "",
        n_quantiles: Optional[int] = None,
    ) -> Found:
        """Tune ``key`` on processed pair Docs (the grid ``values``; a score
        key to maximize, default the component's own objective). The Docs
        are left annotated with the component's current settings."""

    @abstractmethod
    def cross_tune(
        self,
        examples: Sequence[Example],
        *,
        folds: int,
        repeats: int,
        seed: int,
        pair_scores_key: str = "",
        highlight_scores_key: str = "",
        n_quantiles: Optional[int] = None,
        decoding: bool = True,
        vote_share: bool = True,
        progress: Optional[str] = None,
    ) -> Dict[str, object]:
        """The k-fold estimate of tuned scores on unseen pairs
        (``tuning.folds.cross_tuned``), with the settings it was made with."""

    def score_rows(self, result: Dict[str, object]) -> List[Tuple[str, str, str]]:
        """(score, mean, sd) rows of a cross-tuned estimate, for ``shown``."""
        scores, spread = result["scores"], result["spread"]
        return [(k, f"{scores[f'{self.name}_{k}']:.4f}", f"{spread[f'{self.name}_{k}']:.4f}")
                for k in self.shown if f"{self.name}_{k}" in scores]


def tunable(pipe) -> bool:
    return callable(getattr(pipe, "tuning", None))


def tuning_for(nlp, pipe_name: str = "") -> Tuning:
    """The ``Tuning`` of ``pipe_name``, else of the component named
    paraphrase_spans, else of the pipeline's first tunable component.
    ``TuningError`` when there is none."""
    if pipe_name:
        if pipe_name not in nlp.pipe_names:
            raise TuningError(f"No component {pipe_name!r} in the pipeline; it has {nlp.pipe_names}")
        if not tunable(nlp.get_pipe(pipe_name)):
            raise TuningError(f"Component {pipe_name!r} is neither a paraphrase_spans nor a pair_classifier")
        return nlp.get_pipe(pipe_name).tuning(pipe_name)
    names = tunable_names(nlp)
    if not names:
        raise TuningError(f"No paraphrase_spans or pair_classifier component in the pipeline {nlp.pipe_names}")
    name = "paraphrase_spans" if "paraphrase_spans" in names else names[0]
    return nlp.get_pipe(name).tuning(name)


def tunable_names(nlp) -> List[str]:
    """The names of the pipeline's tunable components, in pipeline order."""
    return [name for name, pipe in nlp.pipeline if tunable(pipe)]


def choose_tuning(nlp, pipe_name: str = "", **options) -> Tuning:
    """The ``Tuning`` of ``pipe_name`` (``tuning_for``), checked against the
    command's options (``Tuning.check``); with ``highlight_scale``, the scale
    is set on the component for this run. ValueError (``TuningError``, an
    unknown highlight scale) when the request cannot be carried out."""
    from ..paraphrase_spans.readout import set_highlight_scale

    tuning = tuning_for(nlp, pipe_name)
    tuning.check(**options)
    set_highlight_scale(nlp, tuning.name, options.get("highlight_scale", ""))
    return tuning
