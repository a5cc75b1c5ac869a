"""The ``paraphrase_llm`` component (its factory: ``factory.py``): spacy-llm's ``llm`` component with the
ContextDeP task, plus what the package's commands look for on a
``paraphrase_spans`` component — ``cfg`` (the readout settings: the task's
own dict), ``readout`` and a scorer called with the component's name — so
``evaluate``, ``tune`` (also ``--save``), ``cross-tune``,
``annotate`` and ``visualize`` run on it unchanged.

``threshold``, ``highlight_threshold`` and ``highlight_scale`` given here
(not null) replace the task's; ``tune --save`` writes them here.
The default model is a local OpenAI-compatible server at
http://127.0.0.1:8080/v1: by default no text leaves the machine.
"""
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Tuple, cast

import srsly
from spacy_llm.pipeline.llm import LLMWrapper

from . import registry as _registry  # noqa: F401  (registers the task and the models)
from .readout import VoteReadout

class ParaphraseLLM(LLMWrapper):
    # how ``tune`` / ``cross-tune`` tune it (``tuning/choice.py``)
    tuned_as = "spans"

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
