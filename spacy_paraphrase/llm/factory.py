"""The ``paraphrase_llm`` factory and the ``spacy_paraphrase.paraphrase_llm_scorer.v1``
scorer, registered through entry points. spaCy loads every factory entry point
when it builds any pipeline, so this module imports nothing of spacy-llm: a
pipeline without the LLM component loads where the ``llm`` extra is not
installed, and one with it says how to install it."""
from typing import Any, Callable, Optional

from spacy.language import Language
from spacy.util import registry

from .readout import VoteReadout, score_paraphrase_llm

DEFAULT_TASK = {"@llm_tasks": "spacy_paraphrase.ContextDeP.v1"}
DEFAULT_MODEL = {"@llm_models": "spacy_paraphrase.OpenAICompatible.v1", "base_url": "http://127.0.0.1:8080/v1",
                 "model": "local"}
DEFAULT_CACHE = {"@llm_misc": "spacy.BatchCache.v1", "path": None, "batch_size": 64, "max_batches_in_mem": 4}


@Language.factory(
    "paraphrase_llm",
    assigns=["doc.spans", "doc.cats"],
    default_config={
        "task": DEFAULT_TASK,
        "model": DEFAULT_MODEL,
        "cache": DEFAULT_CACHE,
        "save_io": False,
        "validate_types": True,
        "threshold": None,
        "highlight_threshold": None,
        "highlight_scale": None,
        "scorer": {"@scorers": "spacy_paraphrase.paraphrase_llm_scorer.v1"},
    },
)
def make_paraphrase_llm(
    nlp: Language,
    name: str,
    task: Any,
    model: Any,
    cache: Any,
    save_io: bool,
    validate_types: bool,
    threshold: Optional[float],
    highlight_threshold: Optional[float],
    highlight_scale: Optional[str],
    scorer: Optional[Callable],
) -> Any:
    _require_spacy_llm()
    from .component import ParaphraseLLM
    from .task import ContextDePTask

    if not isinstance(task, ContextDePTask):
        raise ValueError(f"paraphrase_llm needs the task spacy_paraphrase.ContextDeP.v1, got {type(task).__name__}")
    if validate_types:
        from spacy_llm.ty import validate_type_consistency

        validate_type_consistency(task, model)
    overrides = {"threshold": threshold, "highlight_threshold": highlight_threshold, "highlight_scale": highlight_scale}
    for key, value in overrides.items():
        if value is not None:
            task.cfg[key] = float(value) if key != "highlight_scale" else value
    VoteReadout.from_cfg(task.cfg)
    return ParaphraseLLM(name=name, task=task, model=model, cache=cache, save_io=save_io, vocab=nlp.vocab,
                         scorer=scorer)


@registry.scorers("spacy_paraphrase.paraphrase_llm_scorer.v1")
def make_paraphrase_llm_scorer():
    return score_paraphrase_llm


def _require_spacy_llm() -> None:
    try:
        import spacy_llm  # noqa: F401
    except ImportError:
        raise ImportError(
            "The paraphrase_llm component needs spacy-llm: pip install 'spacy-paraphrase[llm]' "
            "(Python >= 3.10; docs/llm.md)"
        ) from None
