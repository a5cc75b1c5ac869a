"""The ``paraphrase_llm`` component: spacy-llm's ``llm`` component with the
ContextDeP task, plus what the package's commands look for on a
``paraphrase_spans`` component — ``cfg`` (the readout settings: the task's
own dict), ``readout`` and a scorer called with the component's name — so
``evaluate``, ``find-threshold`` (also ``--save``), ``cross-tune``,
``annotate`` and ``visualize`` run on it unchanged.

``threshold``, ``highlight_threshold`` and ``highlight_scale`` given here
(not null) replace the task's; ``find-threshold --save`` writes them here.
The default model is a local OpenAI-compatible server at
http://127.0.0.1:8080/v1: by default no text leaves the machine.
"""
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Tuple, cast

import srsly
from spacy import util
from spacy.language import Language
from spacy_llm.pipeline.llm import LLMWrapper

from . import registry as _registry  # noqa: F401  (registers the task, models, scorer)
from .readout import VoteReadout
from .task import ContextDePTask

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
) -> "ParaphraseLLM":
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


class ParaphraseLLM(LLMWrapper):
    def __init__(self, *, scorer: Optional[Callable] = None, **kwargs):
        super().__init__(**kwargs)
        self.scorer = scorer

    @property
    def cfg(self) -> Dict[str, Any]:
        return self._task.cfg

    @property
    def readout(self) -> VoteReadout:
        return VoteReadout.from_cfg(self._task.cfg)

    def score(self, examples, **kwargs) -> Dict[str, Any]:
        scorer = self.scorer or self._task.scorer
        return scorer(examples, name=self.name, **self.cfg)

    def to_disk(self, path: Path, *, exclude: Tuple[str] = cast(Tuple[str], tuple())) -> None:
        super().to_disk(path, exclude=exclude)
        srsly.write_json(Path(path) / "cfg", self.cfg)

    def from_disk(self, path: Path, *, exclude: Tuple[str] = cast(Tuple[str], tuple())) -> "ParaphraseLLM":
        super().from_disk(path, exclude=exclude)
        cfg_file = Path(path) / "cfg"
        if cfg_file.is_file():
            cfg = srsly.read_json(cfg_file)
            VoteReadout.from_cfg({**self._task.cfg, **cfg})
            self._task.cfg.update(cfg)
        return self
