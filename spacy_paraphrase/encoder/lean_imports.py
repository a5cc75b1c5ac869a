"""What importing transformers costs a pipeline that only runs an encoder.

transformers' modelling code imports two optional libraries at import time
whenever they are installed, for functions an encoder never calls:
scikit-learn (``generation/candidate_generator.py``: the ROC curve of assisted
generation's confidence threshold), which brings scipy, pandas and pyarrow, and
``scipy.optimize`` (``loss/loss_*detr*.py``, ``loss_for_object_detection.py``,
``loss_grounding_dino.py``: the matching of object-detection losses). Together
about 190 MB of resident memory and 1.5 s of start-up in every process that
loads a pipeline. scikit-learn and scipy are installed wherever the offline
MiniLM backbone is (through sentence-transformers), so this is every default
install.

``import_transformers_modeling`` imports the modules that read the two
libraries' flags once with the libraries marked absent, then marks them
present again and puts in each module that skipped its import a stand-in
that imports the real function on its first call. transformers then behaves as it does by default, in this
process too (assisted generation, detection losses), and nothing of either
library is loaded until such a call. Importing this module runs it once: every
module of the package that imports transformers or spacy-transformers imports
this one first (``from . import lean_imports``). It does nothing when one of
those modules is already imported, or when ``SPACY_PARAPHRASE_EAGER_IMPORTS``
is set to a non-empty value.
"""
import importlib
import os
import sys
from contextlib import contextmanager
from itertools import chain
from typing import Any, Dict, Iterator, List, Tuple

EAGER_ENV = "SPACY_PARAPHRASE_EAGER_IMPORTS"
# transformers' flag -> the modules that read it at import time: (module, name, where the name comes from)
DEFERRED: Dict[str, List[Tuple[str, str, str]]] = {
    "_sklearn_available": [
        ("transformers.generation.candidate_generator", "roc_curve", "sklearn.metrics"),
    ],
    "_scipy_available": [
        (f"transformers.loss.{module}", "linear_sum_assignment", "scipy.optimize")
        for module in ("loss_for_object_detection", "loss_deformable_detr", "loss_rt_detr", "loss_grounding_dino")
    ],
}


class Deferred:
    """A function imported from ``module`` on its first call."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(self.module), self.name)(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Deferred({self.module}.{self.name})"


@contextmanager
def flags_off(import_utils: Any, flags: List[str]) -> Iterator[None]:
    before = {flag: getattr(import_utils, flag) for flag in flags}
    try:
        for flag in flags:
            setattr(import_utils, flag, False)
        yield
    finally:
        for flag, value in before.items():
            setattr(import_utils, flag, value)


def import_transformers_modeling() -> List[str]:
    """Import transformers' modelling code without the optional libraries it
    does not need here; the names given stand-ins, as ``module.name``."""
    if os.environ.get(EAGER_ENV) or any(m in sys.modules for m, _, _ in chain(*DEFERRED.values())):
        return []
    try:
        from transformers.utils import import_utils
    except ImportError:  # transformers missing: the encoder's own import says so
        return []
    flags = [flag for flag in DEFERRED if getattr(import_utils, flag, False)]
    deferred = []
    with flags_off(import_utils, flags):
        for flag in flags:
            for module_name, name, source in DEFERRED[flag]:
                try:
                    module = importlib.import_module(module_name)
                except ImportError:  # another transformers version: nothing to defer there
                    continue
                if not hasattr(module, name):
                    setattr(module, name, Deferred(source, name))
                    deferred.append(f"{module_name}.{name}")
    return deferred


DEFERRED_NAMES = import_transformers_modeling()
