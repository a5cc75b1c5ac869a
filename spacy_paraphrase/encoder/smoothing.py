"""Activation smoothing for the "int8-smooth" quantize setting (SmoothQuant,
Xiao et al. 2023, "SmoothQuant: Accurate and Efficient Post-Training
Quantization for Large Language Models").

Per-token int8 gives each token one scale, set by its largest input feature.
Transformers carry a few *channels* that are large in every token (the
outlier dimensions of the residual stream and of the feed-forward
activations); they set every token's scale and leave the other channels few
int8 steps. Smoothing moves that range from the activations into the
weights, which take it better: for the input channel j of a Linear layer

    s_j = max|X_j| ** alpha / max|W_:,j| ** (1 - alpha)
    X' = X / s,  W' = W * s   (X' @ W'.T == X @ W.T)

and then quantizes X' per token and W' per output channel. ``max|X_j|`` comes
from calibration: the fp32 pipeline run on real pairs (``calibrate``);
``alpha`` = 0.5 is the paper's default (larger moves more range into the
weights). A channel that stayed (nearly) silent in calibration has its
maximum raised to 1% of its layer's mean (``ACT_FLOOR``), so a later
activation there is not blown up by a tiny ``s``. Layers fed the same tensor (a transformer's query, key and value
projections) share one ``s`` (their weights' maximum taken together), so the
input is still divided and quantized once for all of them.

The calibration is saved with the model: ``record()`` is a small JSON-able
dict (alpha, number of pairs, the groups of layer names and their channel
maxima) set on the Hugging Face config under ``SMOOTHING_ATTR``, which
spacy-transformers serializes with the weights. The fp32 weights stay as
trained; the factors are computed when the module is quantized
(``factors``), so ``quantize = ""`` still loads the pipeline as trained.
"""
import contextlib
from typing import Dict, Iterator, List, Mapping, Optional

import torch

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
