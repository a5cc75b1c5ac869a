"""Torch workarounds of the pair transformer.

``PairHFShim`` is spacy-transformers' ``HFShim`` (itself thinc's
``PyTorchShim``) with ``predict`` and ``use_params`` changed, the way
``HFShim`` changes serialization by subclassing; ``PairTransformerModel``
builds its torch layer with it. Its bytes can leave the weights out, for the
``pair_transformer`` component to keep them in a safetensors file beside them
(``component.py``, ``weights_file.py``). It also carries the transformer's ``quantize`` setting
(``quantize.py``): with an int8 setting it quantizes the torch module when the weights
are loaded, and refuses to train it. ``limit_threads_in_worker`` keeps forked
workers of ``nlp.pipe(n_process=...)`` from hanging.
"""
import contextlib
import multiprocessing
import os
import warnings
from typing import Any, Dict, List, Optional

import srsly
from . import lean_imports  # noqa: F401  (first: transformers without scikit-learn and scipy)
import torch
from spacy.util import SimpleFrozenDict, make_tempdir
from spacy_transformers.data_classes import HFObjects
from spacy_transformers.layers.hf_shim import HFShim
from thinc.api import Model, get_torch_default_device, xp2torch
from thinc.types import ArgsKwargs

from .weights_file import TensorEntry, empty_module, has_quantized_tensors, load_weights
from .quantize import (
    check_cpu,
    check_quantize,
    quantize_module,
    quantized_linears,
    saved_int8_error,
    saved_quantization,
    training_error,
)


class PairHFShim(HFShim):
    """``HFShim`` whose ``predict`` leaves the module in eval mode, whose
    ``use_params`` finds the optimizer's averaged weights, and which quantizes
    the module when ``quantize`` is set (``set_quantize``)."""

    # a key of QUANTIZE_SETTINGS ("", "int8", "int8-token", "int8-smooth"); set per instance by
    # set_quantize (the architectures' ``quantize`` argument).
    quantize: str = ""
    # The module as quantized by this shim (so predict checks one reference,
    # not every submodule, per batch).
    _quantized_model: Optional[torch.nn.Module] = None

    # Set by the pair_transformer component around its to_disk: the bytes leave
    # the weights out (it writes them to a safetensors file). Not for a
    # quantized module, whose packed int8 weights stay in the bytes.
    leave_out_weights: bool = False
    # Set by the pair_transformer component around its from_disk: the tensors
    # of that file (weights_file.read_index), read straight into the module.
    weights_index: Optional[Dict[str, TensorEntry]] = None

    def stores_weights_apart(self) -> bool:
        """Whether the bytes leave the weights out now (``leave_out_weights``
        for a module that has them and is not quantized)."""
        if not self.leave_out_weights or self._model is None:
            return False
        return not saved_quantization(getattr(self._model, "config", None)) and not has_quantized_tensors(self._model)

    def to_bytes(self):
        """``HFShim.to_bytes``; without the weights when ``stores_weights_apart``
        (then ``"weights": "apart"`` says so, and ``state`` is empty)."""
        if not self.stores_weights_apart():
            return super().to_bytes()
        module = self._model
        self._model = torch.nn.Module()  # HFShim saves this (empty) state dict: nothing is copied
        try:
            msg = srsly.msgpack_loads(super().to_bytes())
        finally:
            self._model = module
        msg["state"] = b""
        msg["weights"] = "apart"
        return srsly.msgpack_dumps(msg)

    def from_bytes(self, bytes_data):
        """``HFShim.from_bytes``, then the loaded module quantized when
        ``quantize`` is set. Saved int8 weights (a quantized module saved
        again, marked in its config) are loaded into a module quantized
        before loading, and only when ``quantize`` asks for int8. Bytes
        without the weights (``"weights": "apart"``) take them from
        ``weights_index``: the module is built empty and each tensor read
        into it (``weights_file.load_weights``)."""
        if self.quantize:
            check_cpu(get_torch_default_device())
        if self.weights_index is not None:
            msg = srsly.msgpack_loads(bytes_data)
            if msg.get("weights") == "apart" and msg.get("config"):
                self._load_apart(msg)
                return self
        model_cls = self.model_cls
        self.model_cls = _SavedWeightsModelClass(model_cls, self.quantize)
        try:
            with warnings.catch_warnings():
                # torch.load of a quantized state dict (int8 weights saved again)
                warnings.filterwarnings("ignore", message="TypedStorage is deprecated")
                super().from_bytes(bytes_data)
        finally:
            self.model_cls = model_cls
        self._quantized_model = None
        if self.quantize and self._hfmodel.transformer is not None:
            self.ensure_quantized()
        return self

    def _load_apart(self, msg: dict) -> None:
        """The module of ``msg``'s config, built without weights and filled
        from ``weights_index``; the tokenizer from ``msg``'s files, as
        ``HFShim.from_bytes`` rebuilds it."""
        tok_dict = dict(msg["tokenizer"])
        with make_tempdir() as temp_dir:
            config_file = temp_dir / "config.json"
            srsly.write_json(config_file, msg["config"])
            config = self.config_cls.from_pretrained(config_file)
            tok_kwargs = tok_dict.pop("kwargs", {})
            for file_name, file_bytes in tok_dict.items():
                (temp_dir / file_name).write_bytes(file_bytes)
            tokenizer = self.tokenizer_cls.from_pretrained(str(temp_dir.absolute()), **tok_kwargs)
            vocab_file_contents = None
            if hasattr(tokenizer, "vocab_file"):
                vocab_file_contents = (temp_dir / tokenizer.vocab_files_names["vocab_file"]).read_bytes()
        with empty_module():  # (a quantized module's bytes keep its weights: stores_weights_apart)
            transformer = self.model_cls.from_config(config)
        device = get_torch_default_device()
        load_weights(transformer, self.weights_index, device=device)
        transformer.to(device)
        self._hfmodel = HFObjects(tokenizer, transformer, vocab_file_contents, SimpleFrozenDict(), SimpleFrozenDict())
        self._model = transformer
        self._quantized_model = None
        if self.quantize:
            self.ensure_quantized()

    def ensure_quantized(self) -> None:
        """Quantize the torch module now if ``quantize`` is set and this
        shim has not quantized it yet."""
        if not self.quantize or self._quantized_model is self._model:
            return
        quantize_module(self._model, self.quantize)
        self._quantized_model = self._model

    def begin_update(self, inputs: ArgsKwargs):
        if self.quantize:
            raise training_error()
        return super().begin_update(inputs)

    def predict(self, inputs: ArgsKwargs) -> Any:
        """thinc's ``PyTorchShim.predict``, but the torch module is switched
        to eval mode only when it is not in it already, and not switched back
        to train mode afterwards (``begin_update`` does that itself before
        every training pass). ``Module.eval()`` / ``.train()`` walk every
        submodule, a cost paid twice per batch by the stock shim."""
        if self.quantize and self._quantized_model is not self._model:
            self.ensure_quantized()  # a model initialized from its backbone
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


class _SavedWeightsModelClass:
    """Stands in for ``HFShim.model_cls`` while weights are loaded: builds the
    module from its saved config, quantized first when the config says the
    saved weights are int8 (so the int8 state dict loads exactly)."""

    def __init__(self, model_cls, quantize: str):
        self.model_cls = model_cls
        self.quantize = quantize

    def from_config(self, config, **kwargs):
        saved = saved_quantization(config)
        if saved and saved != self.quantize:
            raise saved_int8_error(self.quantize, saved)
        module = self.model_cls.from_config(config, **kwargs)
        if saved:
            quantize_module(module, saved)
        return module


def pair_shims(model: Model) -> List[PairHFShim]:
    """The ``PairHFShim``s of a pair transformer (or of any model holding one)."""
    return [shim for node in model.walk() for shim in node.shims if isinstance(shim, PairHFShim)]


def set_quantize(model: Model, setting: str) -> Model:
    """Set the ``quantize`` setting (a key of ``QUANTIZE_SETTINGS``) of every pair transformer
    shim in ``model``; applied when weights are loaded (``quantize.py``)."""
    setting = check_quantize(setting)  # an older spelling -> its name
    shims = pair_shims(model)
    if not shims:
        raise ValueError("No pair transformer (PairHFShim) in this model to set quantize on.")
    for shim in shims:
        shim.quantize = setting
    return model


def transformer_modules(model: Model) -> List[torch.nn.Module]:
    """The torch modules (Hugging Face models) of the pair transformers in
    ``model`` that have weights."""
    return [shim._model for shim in pair_shims(model) if shim._model is not None]


def pipeline_transformer_modules(nlp) -> List[torch.nn.Module]:
    """The distinct torch modules (Hugging Face models) of every pair
    transformer in a pipeline's components, in pipeline order."""
    modules: List[torch.nn.Module] = []
    for _, pipe in nlp.pipeline:
        if hasattr(getattr(pipe, "model", None), "walk"):
            modules += transformer_modules(pipe.model)
    return list({id(m): m for m in modules}.values())


def quantized_layer_count(model: Model) -> int:
    """Quantize the pair transformers in ``model`` that are set to (if not done
    yet) and count their quantized Linear layers."""
    for shim in pair_shims(model):
        shim.ensure_quantized()
    return sum(sum(1 for _ in quantized_linears(module)) for module in transformer_modules(model))


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
