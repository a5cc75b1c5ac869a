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
library is loaded until such a call.

transformers' modelling code also imports ``torch._dynamo`` (torch.compile's
tracer, with SymPy: about 70 MB and 1.5 s more) for two things an encoder's
inference never reaches: ``masking_utils`` imports ``TransformGetItemToIndex``
(used when a decoder's causal mask is built for SDPA) and
``integrations/flex_attention.py`` wraps a method in ``torch.compiler.disable``
(flex attention) when its class is defined. ``defer_dynamo`` imports both
modules with that name a stand-in and that decorator applied on the method's
first call: both then behave as they do by default, and ``torch._dynamo`` is
imported by the first thing that needs it (torch.compile, training with
torch's own optimizers, flex attention), not by every load.

Importing this module runs it once: every
module of the package that imports transformers or spacy-transformers imports
this one first (``from . import lean_imports``). It does nothing when one of
those modules is already imported, or when ``SPACY_PARAPHRASE_EAGER_IMPORTS``
is set to a non-empty value.
"""
import functools
import importlib
import inspect
import os
import sys
import types
from contextlib import contextmanager
from itertools import chain
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

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

# The modules of transformers that import torch._dynamo at import time, and the
# submodule of torch._dynamo one of them imports a name from (defer_dynamo).
DYNAMO_IMPORTERS = ("transformers.masking_utils", "transformers.integrations.flex_attention")
DYNAMO_NAMES = ("torch._dynamo._trace_wrapped_higher_order_op", "TransformGetItemToIndex")


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


def lazy_compiler_disable(real: Callable, deferred: Optional[List[str]] = None) -> Callable:
    """``torch.compiler.disable`` as a decorator of functions that applies
    the real one on each call (importing torch._dynamo then), each function
    named in ``deferred``; anything else (a module, a class, no function
    yet) goes to the real one at once."""

    def disable(fn: Optional[Callable] = None, recursive: bool = True, **kwargs: Any) -> Callable:
        if fn is None:
            return lambda f: disable(f, recursive, **kwargs)
        if not inspect.isfunction(fn):
            return real(fn, recursive, **kwargs)
        if deferred is not None:
            deferred.append(f"torch.compiler.disable({fn.__module__}.{fn.__qualname__})")

        @functools.wraps(fn)
        def disabled(*args: Any, **kw: Any) -> Any:
            return real(fn, recursive, **kwargs)(*args, **kw)

        return disabled

    return disable


@contextmanager
def defer_dynamo() -> Iterator[List[str]]:
    """Within the block, ``torch.compiler.disable`` is lazy
    (``lazy_compiler_disable``) and ``DYNAMO_NAMES`` is a stand-in module
    whose name imports the real one on its first call; both are undone on
    leaving. Yields the list the stand-ins used are named in. Nothing
    changes when torch._dynamo is imported already."""
    used: List[str] = []
    if "torch._dynamo" in sys.modules:
        yield used
        return
    import torch

    module_name, name = DYNAMO_NAMES
    stand_in = types.ModuleType(module_name)
    setattr(stand_in, name, Deferred(module_name, name))
    real_disable = torch.compiler.disable
    sys.modules[module_name] = stand_in
    torch.compiler.disable = lazy_compiler_disable(real_disable, used)
    try:
        yield used
    finally:
        torch.compiler.disable = real_disable
        if sys.modules.get(module_name) is stand_in:
            del sys.modules[module_name]
    for importer in DYNAMO_IMPORTERS:
        if isinstance(getattr(sys.modules.get(importer), name, None), Deferred):
            used.append(f"{importer}.{name}")


def import_transformers_modeling() -> List[str]:
    """Import transformers' modelling code without the optional libraries it
    does not need here and without torch._dynamo; the names given stand-ins,
    as ``module.name``."""
    if os.environ.get(EAGER_ENV) or any(m in sys.modules for m, _, _ in chain(*DEFERRED.values())):
        return []
    try:
        from transformers.utils import import_utils
    except ImportError:  # transformers missing: the encoder's own import says so
        return []
    flags = [flag for flag in DEFERRED if getattr(import_utils, flag, False)]
    deferred: List[str] = []
    with defer_dynamo() as dynamo_deferred, flags_off(import_utils, flags):
        for module_name in DYNAMO_IMPORTERS:
            if module_name in sys.modules:
                continue
            try:
                importlib.import_module(module_name)
            except ImportError:  # another transformers version: nothing to defer there
                continue
        for flag in flags:
            for module_name, name, source in DEFERRED[flag]:
                try:
                    module = importlib.import_module(module_name)
                except ImportError:  # another transformers version: nothing to defer there
                    continue
                if not hasattr(module, name):
                    setattr(module, name, Deferred(source, name))
                    deferred.append(f"{module_name}.{name}")
    return deferred + dynamo_deferred


DEFERRED_NAMES = import_transformers_modeling()
