"""Which component a command tunes, and the ``Tuning`` that tunes it.

A tunable component names how it is tuned in its class attribute
``tuned_as``: ``"spans"`` (``paraphrase_spans``, the baseline,
``paraphrase_llm``: ``tuning.spans.SpanTuning``) or ``"classifier"``
(``pair_classifier``: ``tuning.classifier.ClassifierTuning``). The
components import nothing from ``tuning/``: the tuning of a component lies
above it, here.
"""
from typing import Dict, List, Type

from ..paraphrase_spans.readout import set_highlight_scale
from .base import Tuning, TuningError
from .classifier import ClassifierTuning
from .spans import SpanTuning

# ``tuned_as`` -> the Tuning of such a component
TUNINGS: Dict[str, Type[Tuning]] = {"spans": SpanTuning, "classifier": ClassifierTuning}


def tunable(pipe) -> bool:
    return getattr(pipe, "tuned_as", None) in TUNINGS


def tuning_of(pipe, name: str) -> Tuning:
    """The ``Tuning`` of the tunable component ``pipe``, named ``name``."""
    return TUNINGS[pipe.tuned_as](name, pipe)


def tuning_for(nlp, pipe_name: str = "") -> Tuning:
    """The ``Tuning`` of ``pipe_name``, else of the component named
    paraphrase_spans, else of the pipeline's first tunable component.
    ``TuningError`` when there is none."""
    if pipe_name:
        if pipe_name not in nlp.pipe_names:
            raise TuningError(f"No component {pipe_name!r} in the pipeline; it has {nlp.pipe_names}")
        if not tunable(nlp.get_pipe(pipe_name)):
            raise TuningError(f"Component {pipe_name!r} is neither a paraphrase_spans nor a pair_classifier")
        return tuning_of(nlp.get_pipe(pipe_name), pipe_name)
    names = tunable_names(nlp)
    if not names:
        raise TuningError(f"No paraphrase_spans or pair_classifier component in the pipeline {nlp.pipe_names}")
    name = "paraphrase_spans" if "paraphrase_spans" in names else names[0]
    return tuning_of(nlp.get_pipe(name), name)


def tunable_names(nlp) -> List[str]:
    """The names of the pipeline's tunable components, in pipeline order."""
    return [name for name, pipe in nlp.pipeline if tunable(pipe)]


def choose_tuning(nlp, pipe_name: str = "", **options) -> Tuning:
    """The ``Tuning`` of ``pipe_name`` (``tuning_for``), checked against the
    command's options (``Tuning.check``); with ``highlight_scale``, the scale
    is set on the component for this run. ValueError (``TuningError``, an
    unknown highlight scale) when the request cannot be carried out."""
    tuning = tuning_for(nlp, pipe_name)
    tuning.check(**options)
    set_highlight_scale(nlp, tuning.name, options.get("highlight_scale", ""))
    return tuning
