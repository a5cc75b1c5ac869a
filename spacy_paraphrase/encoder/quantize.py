"""Int8 inference of the pair transformer: dynamic quantization of its torch module.

A pipeline is quantized by its config, not by its weights: the ``quantize``
setting of ``spacy_paraphrase.PairTransformerModel.v2`` (and of
``PairTransformer.v2``) is "" (fp32, as trained) or "int8". With "int8",
``PairHFShim`` (``shim.py``) runs ``torch.ao.quantization.quantize_dynamic``
on the Hugging Face model right after its weights are loaded
(``from_bytes`` / ``from_disk``), or before the first prediction of a model
initialized from a pretrained backbone: every ``torch.nn.Linear`` becomes a
``torch.ao.nn.quantized.dynamic.Linear`` (int8 weights, per tensor; the
activations quantized per batch); embeddings and layer norms stay fp32.

Where the weights are fp32 on disk (the ``quantize`` command copies a trained
pipeline and only changes its config), ``quantize = ""`` loads the same
pipeline as trained. A quantized module saved again (``nlp.to_disk``) writes
its int8 weights, marked in the saved Hugging Face config
(``QUANTIZED_ATTR``): they load only with ``quantize = "int8"`` (else a
``QuantizationError`` says so), into an int8 module built from the config,
giving the same outputs. Quantized modules are for inference on CPU only:
training one, or quantizing on a GPU, raises a ``QuantizationError``.
"""
import warnings
from typing import Dict, Iterator

import torch

# The quantize setting of the architectures: config value -> what it does.
QUANTIZE_SETTINGS: Dict[str, str] = {
    "": "none: the fp32 transformer as trained",
    "int8": "dynamic int8 quantization of every torch.nn.Linear (CPU only)",
}
# The quantize command's --method -> the config setting it writes.
QUANTIZE_METHODS: Dict[str, str] = {"dynamic-int8": "int8"}
# Set on the Hugging Face config of a quantized module, so a saved int8
# state dict is recognized when it is loaded again.
QUANTIZED_ATTR = "spacy_paraphrase_quantized"
QUANTIZE_CONFIG_PATH = "components.transformer.model.quantize"


class QuantizationError(ValueError):
    """A quantized transformer was asked for something it cannot do
    (training, running on a GPU), or saved int8 weights met a pipeline that
    is not set to quantize."""


def check_quantize(value: str) -> str:
    """The ``quantize`` setting, validated ("" or "int8")."""
    if value not in QUANTIZE_SETTINGS:
        options = ", ".join(repr(k) for k in QUANTIZE_SETTINGS)
        raise ValueError(f"Unknown quantize setting {value!r}: expected one of {options}.")
    return value


def dynamic_linear_type() -> type:
    """The module type a ``torch.nn.Linear`` becomes under dynamic quantization."""
    return torch.ao.nn.quantized.dynamic.Linear


def quantized_linears(module: torch.nn.Module) -> Iterator[torch.nn.Module]:
    """The dynamically quantized Linear layers of ``module``."""
    qtype = dynamic_linear_type()
    return (m for m in module.modules() if isinstance(m, qtype))


def is_quantized(module: torch.nn.Module) -> bool:
    return next(quantized_linears(module), None) is not None


def module_device(module: torch.nn.Module) -> torch.device:
    for param in module.parameters():
        return param.device
    return torch.device("cpu")


def check_cpu(device: torch.device) -> None:
    """Raise a ``QuantizationError`` unless ``device`` is the CPU."""
    if torch.device(device).type != "cpu":
        raise QuantizationError(
            f"The transformer is set to quantize = \"int8\" (dynamic int8 quantization), "
            f"which runs on CPU only, but it is on {device} (spacy.require_gpu / --gpu-id). "
            "Run this pipeline on CPU, or on the GPU without quantization: "
            f"spacy.load(path, config={{\"{QUANTIZE_CONFIG_PATH}\": \"\"}}) "
            "(only where its weights on disk are fp32, as the quantize command writes them)."
        )


def quantize_module(module: torch.nn.Module, setting: str = "int8") -> int:
    """Quantize ``module`` in place (every ``torch.nn.Linear`` to int8) and mark
    its Hugging Face config; returns the number of quantized Linear layers.
    A module that is already quantized is left as it is."""
    check_quantize(setting)
    if not setting:
        return 0
    check_cpu(module_device(module))
    if module.training:
        module.eval()
    with warnings.catch_warnings():
        # torch 2.x marks torch.ao.quantization (eager mode) as deprecated in
        # favour of torchao; it is still the CPU path of plain torch.
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.filterwarnings("ignore", message=r".*quantize_per_tensor.*", category=UserWarning)
        torch.ao.quantization.quantize_dynamic(
            module, {torch.nn.Linear}, dtype=torch.qint8, inplace=True
        )
    config = getattr(module, "config", None)
    if config is not None:
        setattr(config, QUANTIZED_ATTR, setting)
    return sum(1 for _ in quantized_linears(module))


def saved_quantization(config) -> str:
    """The quantize setting a saved Hugging Face config records for its
    weights ("" = fp32)."""
    return str(getattr(config, QUANTIZED_ATTR, "") or "")


def training_error() -> QuantizationError:
    return QuantizationError(
        "This transformer is set to quantize = \"int8\": an int8-quantized transformer "
        "is for inference only and cannot be trained. Train the fp32 pipeline (load it "
        f"with config={{\"{QUANTIZE_CONFIG_PATH}\": \"\"}}, or use the pipeline the "
        "quantize command was run on), then quantize the result."
    )


def saved_int8_error(setting: str) -> QuantizationError:
    return QuantizationError(
        "This transformer's weights were saved int8-quantized (a quantized pipeline "
        f"saved again), but it is set to quantize = {setting!r}: its fp32 weights are not "
        f"in it. Load it with quantize = \"int8\" ({QUANTIZE_CONFIG_PATH}), or run "
        "`python -m spacy_paraphrase quantize` on the fp32 pipeline it came from."
    )
