"""Int8 inference of the pair transformer: dynamic quantization of its torch module.

A pipeline is quantized by its config, not by its weights: the ``quantize``
setting of ``spacy_paraphrase.PairTransformerModel.v1`` (and of
``PairTransformer.v1``) is "" (fp32, as trained), "int8", "int8-token" or
"int8-smooth", the same names the ``quantize`` command's ``--method`` takes.
``PairHFShim`` (``shim.py``) quantizes the Hugging Face model right after its
weights are loaded (``from_bytes`` / ``from_disk``), or before the first
prediction of a model initialized from a pretrained backbone; embeddings and
layer norms stay fp32. Every ``torch.nn.Linear`` becomes

- "int8": a ``torch.ao.nn.quantized.dynamic.Linear``
  (``torch.ao.quantization.quantize_dynamic``: int8 weights per tensor, the
  activations quantized per batch, one scale for all its tokens; fbgemm's
  fused kernels, the fastest);
- "int8-token": a ``PerTokenInt8Linear`` (int8 weights per output channel,
  activations quantized per token, multiplied by ``torch._int_mm``). Slower
  than "int8" but it keeps quality where one scale per batch does not:
  backbones whose feed-forward layers carry outlier activations in a few
  tokens (all-mpnet-base-v2: per-tensor int8 moves its last hidden states
  to cosine 0.43 of fp32, per token 0.996; see docs/backbones.md);
- "int8-smooth": "int8-token" with each layer's input channels smoothed
  (SmoothQuant, the section "Activation smoothing" below) by a calibration saved on the Hugging Face
  config (``quantize --method int8-smooth --calibrate DATA``): the outlier
  channels no longer set every token's scale. As fast as "int8-token".

Where the weights are fp32 on disk (the ``quantize`` command copies a trained
pipeline and only changes its config), ``quantize = ""`` loads the same
pipeline as trained. A quantized module saved again (``nlp.to_disk``) writes
its int8 weights, marked in the saved Hugging Face config
(``QUANTIZED_ATTR``, with the setting): they load only with that same
``quantize`` setting (else a ``QuantizationError`` says so), into an int8
module built from the config,
giving the same outputs. Quantized modules are for inference on CPU only:
training one, or quantizing on a GPU, raises a ``QuantizationError``.
"""
import contextlib
import threading
import warnings
import weakref
from typing import Dict, Iterator, List, Mapping, Optional, Tuple

import torch

# The quantize setting of the architectures: config value -> what it does.
QUANTIZE_SETTINGS: Dict[str, str] = {
    "": "none: the fp32 transformer as trained",
    "int8": "dynamic int8 quantization of every torch.nn.Linear, one activation scale per batch (CPU only)",
    "int8-token": "int8 weights per output channel and activations per token in every torch.nn.Linear (CPU only)",
    "int8-smooth": "int8-token with the activations' channels smoothed by a saved calibration (SmoothQuant; CPU only)",
}
# The one vocabulary: the names above, in configs and as the quantize
# command's --method alike.
# What the quantize command's --method takes (the settings but "").
QUANTIZE_METHODS = tuple(name for name in QUANTIZE_SETTINGS if name)
# Set on the Hugging Face config of a quantized module, so a saved int8
# state dict is recognized when it is loaded again.
QUANTIZED_ATTR = "spacy_paraphrase_quantized"
QUANTIZE_CONFIG_PATH = "components.transformer.model.quantize"


class QuantizationError(ValueError):
    """A quantized transformer was asked for something it cannot do
    (training, running on a GPU), or saved int8 weights met a pipeline that
    is not set to quantize."""


def check_quantize(value: str) -> str:
    """The ``quantize`` setting, validated: a key of ``QUANTIZE_SETTINGS``."""
    if value not in QUANTIZE_SETTINGS:
        options = ", ".join(repr(k) for k in QUANTIZE_SETTINGS)
        raise ValueError(f"Unknown quantize setting {value!r}: expected one of {options}.")
    return value


def dynamic_linear_type() -> type:
    """The module type a ``torch.nn.Linear`` becomes under dynamic quantization."""
    return torch.ao.nn.quantized.dynamic.Linear


class _LastQuantized(threading.local):
    """The input a ``PerTokenInt8Linear`` quantized last (in this thread), so
    the layers fed the very same tensor in a row (a transformer's query, key
    and value projections) quantize it once. Keyed by the tensor object (a weak
    reference) and its in-place version counter: a tensor changed in place, or
    another tensor, is quantized afresh. Tensors made under
    ``torch.inference_mode()`` have no version counter, so they are never
    cached (the pipeline predicts under ``torch.no_grad()``)."""

    ref: Optional[weakref.ReferenceType] = None
    version: int = -1
    smooth: Optional[torch.Tensor] = None
    value: Optional[Tuple[torch.Tensor, torch.Tensor]] = None

    def get(
        self, x: torch.Tensor, smooth: Optional[torch.Tensor] = None
    ) -> Optional[Tuple[torch.Tensor, torch.Tensor]]:
        # put() never keeps an inference tensor, so ``ref() is x`` excludes them
        # before ``x._version`` (which they lack) is read. Layers that divide
        # the input by different smoothing factors never share its quantization.
        if (self.ref is not None and self.ref() is x and self.version == x._version
                and self.smooth is smooth):
            return self.value
        return None

    def put(
        self, x: torch.Tensor, value: Tuple[torch.Tensor, torch.Tensor], smooth: Optional[torch.Tensor] = None
    ) -> None:
        if x.is_inference():
            self.ref, self.smooth, self.value = None, None, None
            return
        self.ref, self.version, self.smooth, self.value = weakref.ref(x), x._version, smooth, value


_LAST_QUANTIZED = _LastQuantized()


def quantize_per_token(
    x: torch.Tensor, inverse_smooth: Optional[torch.Tensor] = None
) -> Tuple[torch.Tensor, torch.Tensor]:
    """``x`` ([..., features]) as int8 rows [tokens, features] and their fp32
    scales [tokens, 1]: symmetric, one scale per row (its largest magnitude
    maps to 127). With ``inverse_smooth`` ([features]), the rows are first
    multiplied by it (``x / s`` of the smoothing below)."""
    rows = x.reshape(-1, x.shape[-1]).float()
    if inverse_smooth is not None:
        rows = rows * inverse_smooth  # a new tensor: scaled in place below
    # amax and amin apart: torch's CPU aminmax over a dimension is ~8x slower
    # than the two (torch 2.13, one thread), and it was 17% of an mpnet forward.
    low, high = rows.amin(dim=1, keepdim=True), rows.amax(dim=1, keepdim=True)
    scale = torch.maximum(-low, high).clamp_(min=1e-8).div_(127.0)
    if inverse_smooth is not None:
        scaled = rows.mul_(scale.reciprocal())
    else:  # rows may be x itself (a view of the caller's input): not in place
        scaled = torch.mul(rows, scale.reciprocal())
    return scaled.round_().to(torch.int8), scale


class PerTokenInt8Linear(torch.nn.Module):
    """A ``torch.nn.Linear`` for inference in int8: weights quantized
    symmetrically per output channel when built, the input quantized
    symmetrically per row (token) at each call, the int8 product computed by
    ``torch._int_mm`` (int32) and scaled back to fp32 with the bias added.
    One outlier token sets only its own scale, so the others keep their
    precision. Holds buffers only (``weight_int8`` [in, out], ``weight_scale``
    [out], ``bias``, and ``input_smooth``), which is what its state dict saves.
    An input passed to several layers in a row is quantized once
    (``_LastQuantized``).

    ``smooth`` ([in], ``factors``): the weight's input columns are
    multiplied by it before quantizing, and each input divided by it
    (``input_smooth`` holds 1 / smooth; layers given the same ``smooth``
    tensor share that buffer, so a shared input is still quantized once)."""

    def __init__(self, linear: torch.nn.Linear, smooth: Optional[torch.Tensor] = None):
        super().__init__()
        weight = linear.weight.detach().float()
        if smooth is not None:
            weight = weight * smooth.float()[None, :]
        scale = weight.abs().amax(dim=1).clamp(min=1e-8) / 127.0
        int8 = torch.round(weight / scale[:, None]).to(torch.int8)
        self.in_features = linear.in_features
        self.out_features = linear.out_features
        self.register_buffer("weight_int8", int8.t().contiguous())
        self.register_buffer("weight_scale", scale)
        bias = linear.bias.detach().float().clone() if linear.bias is not None else None
        self.register_buffer("bias", bias)
        self.register_buffer("input_smooth", smooth.float().reciprocal() if smooth is not None else None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        smooth = self.input_smooth
        quantized = _LAST_QUANTIZED.get(x, smooth)
        if quantized is None:
            quantized = quantize_per_token(x, smooth)
            _LAST_QUANTIZED.put(x, quantized, smooth)
        int8, scale = quantized
        out = torch._int_mm(int8, self.weight_int8).float().mul_(scale)
        if self.bias is not None:
            out = torch.addcmul(self.bias, out, self.weight_scale)
        else:
            out.mul_(self.weight_scale)
        return out.reshape(*shape[:-1], self.out_features)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}, smoothed={self.input_smooth is not None}")


def per_token_linears(module: torch.nn.Module, smooth: Optional[Dict[str, torch.Tensor]] = None) -> int:
    """Replace every ``torch.nn.Linear`` in ``module`` by a
    ``PerTokenInt8Linear`` (smoothed by ``smooth[name]`` where given), in
    place; returns how many were replaced."""
    smooth = smooth or {}
    shared: Dict[int, torch.Tensor] = {}  # id(smooth tensor) -> the group's input_smooth
    linears = [(name, m) for name, m in module.named_modules() if isinstance(m, torch.nn.Linear)]
    for name, linear in linears:
        parent_name, _, child = name.rpartition(".")
        parent = module.get_submodule(parent_name) if parent_name else module
        layer = PerTokenInt8Linear(linear, smooth.get(name))
        if name in smooth:
            layer.input_smooth = shared.setdefault(id(smooth[name]), layer.input_smooth)
        setattr(parent, child, layer)
    return len(linears)


def quantized_linears(module: torch.nn.Module) -> Iterator[torch.nn.Module]:
    """The quantized Linear layers of ``module`` (either setting)."""
    qtypes = (dynamic_linear_type(), PerTokenInt8Linear)
    return (m for m in module.modules() if isinstance(m, qtypes))


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
            "The transformer is set to int8 quantization (quantize = \"int8\", \"int8-token\" or \"int8-smooth\"), "
            f"which runs on CPU only, but it is on {device} (spacy.require_gpu / --gpu-id). "
            "Run this pipeline on CPU, or on the GPU without quantization: "
            f"spacy.load(path, config={{\"{QUANTIZE_CONFIG_PATH}\": \"\"}}) "
            "(only where its weights on disk are fp32, as the quantize command writes them)."
        )


def quantize_module(module: torch.nn.Module, setting: str = "int8") -> int:
    """Quantize ``module`` in place (every ``torch.nn.Linear`` to int8 by
    ``setting``) and mark its Hugging Face config; returns the number of
    quantized Linear layers. A module that is already quantized is left as it is."""
    setting = check_quantize(setting)
    if not setting:
        return 0
    check_cpu(module_device(module))
    if module.training:
        module.eval()
    if is_quantized(module):
        # (built quantized from saved int8 weights: _SavedWeightsModelClass)
        saved = saved_quantization(getattr(module, "config", None))
        if saved and saved != setting:
            raise saved_int8_error(setting, saved)
        return sum(1 for _ in quantized_linears(module))
    with warnings.catch_warnings():
        # torch 2.x marks torch.ao.quantization (eager mode) as deprecated in
        # favour of torchao; it is still the CPU path of plain torch.
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.filterwarnings("ignore", message=r".*quantize_per_tensor.*", category=UserWarning)
        if setting == "int8-smooth":
            per_token_linears(module, smoothing_factors(module))
        elif setting == "int8-token":
            per_token_linears(module)
        else:
            torch.ao.quantization.quantize_dynamic(
                module, {torch.nn.Linear}, dtype=torch.qint8, inplace=True
            )
    config = getattr(module, "config", None)
    if config is not None:
        setattr(config, QUANTIZED_ATTR, setting)
    return sum(1 for _ in quantized_linears(module))


def smoothing_factors(module: torch.nn.Module) -> Dict[str, torch.Tensor]:
    """The smoothing factors of the calibration saved on ``module``'s config;
    a ``QuantizationError`` when it has none."""
    record = saved_record(getattr(module, "config", None))
    if record is None:
        raise QuantizationError(
            "This transformer is set to quantize = \"int8-smooth\", which needs the activation "
            "calibration saved with its weights, and it has none. Write the pipeline with "
            "`python -m spacy_paraphrase quantize MODEL OUT --method int8-smooth --calibrate "
            "PAIRS.spacy`, or use quantize = \"int8-token\" (no calibration)."
        )
    try:
        return factors(module, record)
    except ValueError as err:
        raise QuantizationError(str(err)) from None


def saved_quantization(config) -> str:
    """The quantize setting a saved Hugging Face config records for its
    weights ("" = fp32)."""
    return str(getattr(config, QUANTIZED_ATTR, "") or "")


def training_error() -> QuantizationError:
    return QuantizationError(
        "This transformer is set to int8 quantization: an int8-quantized transformer "
        "is for inference only and cannot be trained. Train the fp32 pipeline (load it "
        f"with config={{\"{QUANTIZE_CONFIG_PATH}\": \"\"}}, or use the pipeline the "
        "quantize command was run on), then quantize the result."
    )


def saved_int8_error(setting: str, saved: str) -> QuantizationError:
    return QuantizationError(
        f"This transformer's weights were saved int8-quantized with quantize = {saved!r} (a "
        f"quantized pipeline saved again), but it is set to quantize = {setting!r}: its fp32 "
        f"weights are not in it. Load it with quantize = {saved!r} ({QUANTIZE_CONFIG_PATH}), or run "
        "`python -m spacy_paraphrase quantize` on the fp32 pipeline it came from."
    )


# ----------------------------------------------------------------------------
# Activation smoothing for the "int8-smooth" quantize setting (SmoothQuant,
# Xiao et al. 2023, "SmoothQuant: Accurate and Efficient Post-Training
# Quantization for Large Language Models").
#
# Per-token int8 gives each token one scale, set by its largest input feature.
# Transformers carry a few *channels* that are large in every token (the
# outlier dimensions of the residual stream and of the feed-forward
# activations); they set every token's scale and leave the other channels few
# int8 steps. Smoothing moves that range from the activations into the
# weights, which take it better: for the input channel j of a Linear layer
#
#     s_j = max|X_j| ** alpha / max|W_:,j| ** (1 - alpha)
#     X' = X / s,  W' = W * s   (X' @ W'.T == X @ W.T)
#
# and then quantizes X' per token and W' per output channel. ``max|X_j|`` comes
# from calibration: the fp32 pipeline run on real pairs (``calibrate``);
# ``alpha`` = 0.5 is the paper's default (larger moves more range into the
# weights). A channel that stayed (nearly) silent in calibration has its
# maximum raised to 1% of its layer's mean (``ACT_FLOOR``), so a later
# activation there is not blown up by a tiny ``s``. Layers fed the same tensor (a transformer's query, key and value
# projections) share one ``s`` (their weights' maximum taken together), so the
# input is still divided and quantized once for all of them.
#
# The calibration is saved with the model: ``record()`` is a small JSON-able
# dict (alpha, number of pairs, the groups of layer names and their channel
# maxima) set on the Hugging Face config under ``SMOOTHING_ATTR``, which
# spacy-transformers serializes with the weights. The fp32 weights stay as
# trained; the factors are computed when the module is quantized
# (``factors``), so ``quantize = ""`` still loads the pipeline as trained.
# ----------------------------------------------------------------------------

SMOOTHING_ATTR = "spacy_paraphrase_smoothing"
DEFAULT_ALPHA = 0.5
# Calibrated channel maxima below this share of their layer's mean are raised to it.
ACT_FLOOR = 0.01
_EPS = 1e-5


def linear_layers(module: torch.nn.Module) -> Dict[str, torch.nn.Linear]:
    """The ``torch.nn.Linear`` layers of ``module`` by their dotted names."""
    return {name: m for name, m in module.named_modules() if isinstance(m, torch.nn.Linear)}


class Calibration:
    """Channel maxima of every Linear layer's input, and which layers are fed
    the same tensor, recorded over the forward passes of a module
    (``calibrating``)."""

    def __init__(self, names: List[str]):
        self.names = list(names)
        self.absmax: Dict[str, torch.Tensor] = {}
        # name -> the first layer fed the same tensor in the same pass (itself
        # when none), or None once that differed between passes
        self.owner: Dict[str, Optional[str]] = {}
        self.passes = 0
        self._seen: Dict[int, tuple] = {}

    def start_pass(self) -> None:
        self._seen = {}
        self.passes += 1

    def end_pass(self) -> None:
        self._seen = {}  # (the references kept the pass's tensors from being reused)

    def observe(self, name: str, x: torch.Tensor) -> None:
        rows = x.detach().reshape(-1, x.shape[-1]).float()
        if rows.shape[0] == 0:
            return
        m = rows.abs().amax(dim=0)
        self.absmax[name] = torch.maximum(self.absmax[name], m) if name in self.absmax else m
        # the pass's inputs are kept referenced (freed at its end), so that no
        # later tensor can take a freed one's id within the pass
        owner = self._seen.setdefault(id(x), (x, name))[1]
        if name not in self.owner:
            self.owner[name] = owner
        elif self.owner[name] != owner:
            self.owner[name] = None

    def groups(self) -> List[List[str]]:
        """Layers that were fed the same tensor in every pass, together (in
        the module's order); every other observed layer alone."""
        out: Dict[str, List[str]] = {}
        for name in self.names:
            if name not in self.absmax:
                continue
            owner = self.owner.get(name)
            key = owner if owner is not None and self.owner.get(owner) == owner else name
            out.setdefault(key, []).append(name)
        return list(out.values())

    def _group_absmax(self, names: List[str]) -> torch.Tensor:
        return torch.stack([self.absmax[name] for name in names]).amax(dim=0)

    def record(self, alpha: float = DEFAULT_ALPHA, pairs: int = 0) -> Dict:
        """The calibration as saved on the Hugging Face config."""
        check_alpha(alpha)
        if not self.absmax:
            raise ValueError("No Linear layer input was observed: run the pipeline on pairs while calibrating.")
        return {
            "alpha": float(alpha),
            "pairs": int(pairs),
            "groups": [
                {"layers": names, "absmax": [float(f"{v:.6g}") for v in self._group_absmax(names).tolist()]}
                for names in self.groups()
            ],
        }


def check_alpha(alpha: float) -> float:
    if not 0.0 <= float(alpha) <= 1.0:
        raise ValueError(f"The smoothing alpha must be in [0, 1], got {alpha}.")
    return float(alpha)


@contextlib.contextmanager
def calibrating(module: torch.nn.Module) -> Iterator[Calibration]:
    """Record a ``Calibration`` of ``module`` over the forward passes run
    inside the block (hooks removed on exit)."""
    layers = linear_layers(module)
    calibration = Calibration(list(layers))
    hooks = [module.register_forward_pre_hook(lambda m, args: calibration.start_pass())]
    hooks.append(module.register_forward_hook(lambda m, args, out: calibration.end_pass()))
    for name, layer in layers.items():
        hooks.append(layer.register_forward_pre_hook(
            lambda m, args, name=name: calibration.observe(name, args[0])))
    try:
        yield calibration
    finally:
        for hook in hooks:
            hook.remove()


def saved_record(config) -> Optional[Mapping]:
    """The calibration a Hugging Face config carries, if any."""
    record = getattr(config, SMOOTHING_ATTR, None)
    return record or None


def factors(module: torch.nn.Module, record: Mapping) -> Dict[str, torch.Tensor]:
    """Layer name -> its smoothing factors ``s`` (one tensor object shared by
    the layers of a group), from the calibration ``record`` and the module's
    fp32 weights. A layer of the record that the module lacks, or whose width
    differs, is an error: the calibration belongs to another model."""
    alpha = check_alpha(record.get("alpha", DEFAULT_ALPHA))
    layers = linear_layers(module)
    out: Dict[str, torch.Tensor] = {}
    for group in record.get("groups", []):
        names = list(group["layers"])
        act = torch.tensor(group["absmax"], dtype=torch.float32)
        # a channel (nearly) silent in calibration would get a tiny s and have
        # any later activation multiplied by 1 / s: floor it at 1% of the mean
        act = act.clamp(min=max(_EPS, ACT_FLOOR * float(act.mean()))) if act.numel() else act
        for name in names:
            if name not in layers or layers[name].in_features != act.numel():
                raise ValueError(
                    f"The saved smoothing calibration does not fit this model: layer {name!r} "
                    f"{'is missing' if name not in layers else f'has {layers[name].in_features} inputs, not {act.numel()}'}."
                )
        weight = torch.stack([layers[n].weight.detach().float().abs().amax(dim=0) for n in names]).amax(dim=0)
        s = (act.clamp(min=_EPS).pow(alpha) / weight.clamp(min=_EPS).pow(1.0 - alpha)).clamp(min=_EPS)
        for name in names:
            out[name] = s
    return out
