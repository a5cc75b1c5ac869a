"""Torch workarounds of the pair transformer.

``PairHFShim`` is spacy-transformers' ``HFShim`` (itself thinc's
``PyTorchShim``) with two methods changed, the way ``HFShim`` changes
serialization by subclassing; ``PairTransformerModel`` builds its torch layer
with it. ``limit_threads_in_worker`` keeps forked workers of
``nlp.pipe(n_process=...)`` from hanging.
"""
import contextlib
import multiprocessing
import os
from typing import Any, Optional

import torch
from spacy_transformers.layers.hf_shim import HFShim
from thinc.api import xp2torch
from thinc.types import ArgsKwargs


class PairHFShim(HFShim):
    """``HFShim`` whose ``predict`` leaves the module in eval mode and whose
    ``use_params`` finds the optimizer's averaged weights."""

    def predict(self, inputs: ArgsKwargs) -> Any:
        """thinc's ``PyTorchShim.predict``, but the torch module is switched
        to eval mode only when it is not in it already, and not switched back
        to train mode afterwards (``begin_update`` does that itself before
        every training pass). ``Module.eval()`` / ``.train()`` walk every
        submodule, a cost paid twice per batch by the stock shim."""
        if self._model.training:
            self._model.eval()
        with torch.no_grad():
            with torch.autocast(device_type="cuda", enabled=self._mixed_precision):
                return self._model(*inputs.args, **inputs.kwargs)

    @contextlib.contextmanager
    def use_params(self, params):
        """thinc's ``PyTorchShim.use_params``, but it also finds the
        parameters under the keys the optimizer uses. ``finish_update`` hands
        thinc's optimizer ``(shim.id, name)`` keys, so ``optimizer.averages``
        (``[training.optimizer] use_averages = true``) holds the transformer's
        averaged weights under those keys, while the stock ``use_params`` only
        looks for ``"pytorch_<id>_<name>"`` strings: the averages would never
        reach the transformer, in evaluation or in the saved pipeline. Both
        key forms are accepted; parameters without an entry keep their
        current values."""
        prefix = f"pytorch_{self.id}_"
        state = {}
        for key, value in params.items():
            if isinstance(key, tuple) and len(key) == 2 and key[0] == self.id:
                state[key[1]] = value
            elif isinstance(key, str) and key.startswith(prefix):
                state[key[len(prefix):]] = value
        if not state:
            yield
            return
        backup = {k: v.clone() for k, v in self._model.state_dict().items()}
        self._model.load_state_dict(
            {k: xp2torch(v, device=self.device) for k, v in state.items()}, strict=False
        )
        try:
            yield
        finally:
            self._model.load_state_dict(backup)


_THREADS_CHECKED_PID: Optional[int] = None


def limit_threads_in_worker() -> None:
    """In a worker process (``nlp.pipe(n_process=...)`` forks on Linux), use
    one torch thread: torch's thread pool does not survive a fork and would
    hang. Runs once per process."""
    global _THREADS_CHECKED_PID
    pid = os.getpid()
    if _THREADS_CHECKED_PID == pid:
        return
    _THREADS_CHECKED_PID = pid
    if multiprocessing.parent_process() is not None:
        torch.set_num_threads(1)
