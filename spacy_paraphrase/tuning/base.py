"""The tuning interface: what ``tune`` and ``cross-tune`` ask of a
component whose decision settings can be tuned on pair Docs.

A tunable component says how it is tuned (``tuned_as``) and
``tuning/choice.py`` gives it its ``Tuning``: ``paraphrase_spans`` (and the
baseline and ``paraphrase_llm`` in its place) a ``tuning.spans.SpanTuning``,
``pair_classifier`` a ``tuning.classifier.ClassifierTuning``. A ``Tuning``
says which keys it tunes, refuses the options it has no use for (``check``),
tunes one key on processed pair Docs (``find``) and estimates tuned scores on
unseen pairs (``cross_tune``). The commands (``cli/tune.py``,
``cli/cross_tune.py``) hold no component branches: they load, pick the
component (``choice.choose_tuning``), process the pairs once and print what
the ``Tuning`` returns.

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
