"""A transformer's weights on disk, loaded in the memory of the weights.

A pipeline keeps its transformer's weights in a safetensors file beside the
component's small ``model`` file (``component.py``), and ``import-model`` reads a
Hugging Face checkpoint's ``model.safetensors`` (sharded or not) or
``pytorch_model.bin``. Either way the module is built without weights (its
parameters on the meta device, no random init: ``empty_module``) and each tensor is read from
the file straight into the memory that becomes its parameter
(``load_weights``): no msgpack, BytesIO or ``torch.load`` copy, no second
model. Peak memory is the weights once, plus the libraries
(``benchmarks/run_load_memory.py`` measures it).

Writing goes through the ``safetensors`` library (``save_file`` writes from the
tensors' own memory). Reading does not use its ``safe_open``: that maps the
whole file and every page read stays resident until it is closed, a second
copy of the weights at the peak. The format is small (an 8-byte header size,
a JSON header of ``{name: {dtype, shape, data_offsets}}``, then the bytes) and
``tests/encoder/test_weights_file.py`` checks this reader against the
library on files each writes.
"""
import contextlib
import json
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import torch

# The file a pipeline's transformer component keeps its weights in (beside its ``model`` file).
WEIGHTS_FILE = "model.safetensors"
_DTYPES = {
    "F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
    "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8,
    "BOOL": torch.bool,
}
# A header larger than this is no safetensors header (the format caps it at 100 MB).
_MAX_HEADER = 100_000_000


class WeightsFileError(ValueError):
    """A weights file that cannot be read, or that does not fit the module (one line)."""


@dataclass(frozen=True)
class TensorEntry:
    path: Path
    dtype: torch.dtype
    shape: Tuple[int, ...]
    start: int  # absolute byte offset in the file
    end: int


def read_index(paths: Sequence[Path]) -> Dict[str, TensorEntry]:
    """Every tensor of the safetensors files ``paths`` (the shards of one
    checkpoint): name -> where its bytes are. WeightsFileError for a file
    that is not safetensors or a name in two shards."""
    index: Dict[str, TensorEntry] = {}
    for path in paths:
        path = Path(path)
        try:
            with path.open("rb") as handle:
                raw = handle.read(8)
                if len(raw) < 8:
                    raise WeightsFileError(f"{path} is not a safetensors file (shorter than its header).")
                (size,) = struct.unpack("<Q", raw)
                if size > _MAX_HEADER:
                    raise WeightsFileError(f"{path} is not a safetensors file (header size {size}).")
                header = json.loads(handle.read(size).decode("utf-8"))
                file_size = path.stat().st_size
        except (OSError, UnicodeDecodeError, ValueError) as err:
            if isinstance(err, WeightsFileError):
                raise
            raise WeightsFileError(f"{path} cannot be read as safetensors ({type(err).__name__}: {err}).") from None
        base = 8 + size
        for name, info in header.items():
            if name == "__metadata__":
                continue
            dtype = _DTYPES.get(info.get("dtype"))
            if dtype is None:
                raise WeightsFileError(f"{path}: tensor {name!r} has the unsupported dtype {info.get('dtype')!r}.")
            start, end = (base + int(o) for o in info["data_offsets"])
            shape = tuple(int(d) for d in info["shape"])
            n_bytes = _numel(shape) * torch.empty((), dtype=dtype).element_size()
            if end - start != n_bytes or end > file_size:
                raise WeightsFileError(f"{path}: tensor {name!r} is cut or inconsistent (the file is damaged).")
            if name in index:
                raise WeightsFileError(f"{name!r} is in two weight files ({index[name].path.name}, {path.name}).")
            index[name] = TensorEntry(path, dtype, shape, start, end)
    return index


def checkpoint_index(folder: Path) -> Dict[str, Union[TensorEntry, torch.Tensor]]:
    """The tensors of a Hugging Face checkpoint folder: ``model.safetensors``,
    its shards (``model.safetensors.index.json``), else ``pytorch_model.bin``
    (or its shards), whose tensors ``torch.load`` maps from the file rather
    than reading them (``mmap=True``). WeightsFileError when it has none, or
    a shard is missing."""
    folder = Path(folder)
    for name in ("model.safetensors", "pytorch_model.bin"):
        single = folder / name
        sharded = folder / f"{name}.index.json"
        if single.is_file():
            paths = [single]
        elif sharded.is_file():
            try:
                weight_map = json.loads(sharded.read_text(encoding="utf-8"))["weight_map"]
                paths = [folder / shard for shard in sorted(set(weight_map.values()))]
            except (ValueError, KeyError, TypeError, AttributeError) as err:
                raise WeightsFileError(f"{sharded} is no shard index ({type(err).__name__}).") from None
            missing = [p.name for p in paths if not p.is_file()]
            if missing:
                raise WeightsFileError(f"{folder}: the shard {missing[0]} listed in {sharded.name} is missing "
                                       f"({len(missing)} of {len(paths)} missing); download it again.")
        else:
            continue
        if name == "model.safetensors":
            return dict(read_index(paths))
        tensors: Dict[str, Union[TensorEntry, torch.Tensor]] = {}
        for path in paths:
            try:
                tensors.update(torch.load(str(path), map_location="cpu", mmap=True, weights_only=True))
            except Exception as err:  # a damaged or non-torch file
                raise WeightsFileError(f"{path} cannot be read ({type(err).__name__}).") from None
        return tensors
    raise WeightsFileError(f"{folder} has no weights (model.safetensors or pytorch_model.bin, or their shards).")


def read_metadata(path: Path) -> Dict[str, str]:
    """The ``__metadata__`` strings of a safetensors file's header."""
    with Path(path).open("rb") as handle:
        (size,) = struct.unpack("<Q", handle.read(8))
        return dict(json.loads(handle.read(size).decode("utf-8")).get("__metadata__") or {})


def _numel(shape: Tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def read_tensor(entry: Union[TensorEntry, torch.Tensor], handle=None) -> torch.Tensor:
    """One tensor read from its file into new (CPU) memory: no other copy
    (a tensor given as such is returned)."""
    if isinstance(entry, torch.Tensor):
        return entry
    tensor = torch.empty(entry.shape, dtype=entry.dtype)
    if entry.end == entry.start:
        return tensor
    with contextlib.ExitStack() as stack:
        if handle is None:
            handle = stack.enter_context(entry.path.open("rb"))
        handle.seek(entry.start)
        view = memoryview(tensor.view(-1).view(torch.uint8).numpy()).cast("B")
        got = handle.readinto(view)
        if got != entry.end - entry.start:
            raise WeightsFileError(f"{entry.path} ends inside a tensor (the file is cut).")
    return tensor


@contextlib.contextmanager
def empty_module() -> Iterator[None]:
    """Build a Hugging Face module inside this context: its parameters on
    the meta device (no memory, no random init), its buffers real (the
    non-persistent ones, such as position ids, are not in the weights file)."""
    from transformers.integrations.accelerate import init_empty_weights
    from transformers.modeling_utils import no_init_weights

    with init_empty_weights(include_buffers=False), no_init_weights():
        yield


def module_tensors(module: torch.nn.Module) -> Dict[str, torch.Tensor]:
    """The tensors the weights file holds for ``module``: its parameters and
    persistent buffers by their state-dict names (tied ones under each name)."""
    names = set(module.state_dict(keep_vars=True).keys())
    found = {}
    for name, param in module.named_parameters(remove_duplicate=False):
        found[name] = param
    for name, buffer in module.named_buffers(remove_duplicate=False):
        if name in names:
            found[name] = buffer
    return found


def load_weights(module: torch.nn.Module, index: Mapping[str, Union[TensorEntry, torch.Tensor]], *,
                 key: Callable[[str], str] = lambda name: name, device: Optional[torch.device] = None,
                 strict: bool = True, zeros_for: Callable[[str], bool] = lambda name: False) -> List[str]:
    """Read ``module``'s parameters and persistent buffers from the files of
    ``index`` (``read_index``), the tensor of state-dict name ``n`` stored as
    ``key(n)``, each straight into the memory that becomes it (a tensor
    given as such, ``checkpoint_index``'s of a ``.bin`` file, is used as it is; then moved to
    ``device`` when that is not the CPU, one tensor at a time). A module
    built in ``empty_module`` gets its memory here. Tied parameters are read
    once. WeightsFileError when a tensor is missing or of another shape;
    with ``strict``, also when the files hold tensors the module does not
    use. A tensor missing from the files whose name ``zeros_for`` accepts
    is zeros instead (a token classifier's checkpoint has no pooler; the
    pipeline never reads it). Returns the keys read."""
    targets = module_tensors(module)
    loaded: Dict[int, torch.Tensor] = {}
    used: List[str] = []
    handles: Dict[Path, object] = {}
    with contextlib.ExitStack() as stack:
        for name, current in targets.items():
            if id(current) in loaded:  # tied to a parameter read already: the same object again
                _assign(module, name, loaded[id(current)])
                continue
            stored = key(name)
            entry = index.get(stored)
            if entry is None and zeros_for(name):
                value = torch.zeros(tuple(current.shape), dtype=current.dtype, device=device)
                loaded[id(current)] = _assign(module, name, _like(current, value))
                continue
            if entry is None:
                raise WeightsFileError(f"the weights have no tensor {stored!r} for the model's {name!r}.")
            if tuple(entry.shape) != tuple(current.shape):
                raise WeightsFileError(f"the weights' {stored!r} is {tuple(entry.shape)}, the model's "
                                       f"{name!r} is {tuple(current.shape)}.")
            used.append(stored)
            if isinstance(entry, torch.Tensor):
                value = entry
            else:
                if entry.path not in handles:
                    handles[entry.path] = stack.enter_context(entry.path.open("rb"))
                value = read_tensor(entry, handles[entry.path])
            if current.dtype.is_floating_point and value.dtype.is_floating_point and current.dtype != value.dtype:
                value = value.to(current.dtype)  # e.g. fp16 weights into an fp32 model, one tensor at a time
            if device is not None and torch.device(device).type != "cpu":
                value = value.to(device)
            loaded[id(current)] = _assign(module, name, _like(current, value))
    if strict:
        extra = sorted(set(index) - set(used))
        if extra:
            shown = ", ".join(extra[:3]) + (" ..." if len(extra) > 3 else "")
            raise WeightsFileError(f"the weights hold {len(extra)} tensors the model does not use ({shown}).")
    return used


def _like(current: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    """``value`` as what ``current`` is: a Parameter (same requires_grad) or a buffer."""
    if isinstance(current, torch.nn.Parameter):
        return torch.nn.Parameter(value, requires_grad=current.requires_grad)
    return value


def _assign(module: torch.nn.Module, name: str, value: torch.Tensor) -> torch.Tensor:
    owner_name, _, leaf = name.rpartition(".")
    owner = module.get_submodule(owner_name) if owner_name else module
    if isinstance(value, torch.nn.Parameter):
        owner._parameters[leaf] = value
    else:
        owner._buffers[leaf] = value
    return value


def save_weights(module: torch.nn.Module, path: Path, metadata: Optional[Dict[str, str]] = None) -> None:
    """Write ``module``'s state dict as a safetensors file, from the tensors'
    own memory (CPU tensors are not copied; tensors on a device come over one
    at a time). A tensor tied to an earlier one is stored once: the loader
    finds it through the module's own tying."""
    from safetensors.torch import save_file

    tensors: Dict[str, torch.Tensor] = {}
    seen = set()
    for name, tensor in module.state_dict().items():
        if getattr(tensor, "is_quantized", False):
            raise WeightsFileError(f"{name!r} is a quantized tensor: not stored in a safetensors file.")
        ident = (tensor.device, tensor.data_ptr(), tensor.dtype, tuple(tensor.shape), tensor.stride())
        if tensor.numel() and ident in seen:
            continue
        seen.add(ident)
        tensor = tensor.detach()
        if tensor.device.type != "cpu":
            tensor = tensor.cpu()
        tensors[name] = tensor.contiguous()
    save_file(tensors, str(path), metadata=dict(metadata or {}))


def has_quantized_tensors(module: torch.nn.Module) -> bool:
    """Whether the module's state dict holds quantized tensors or packed params
    (a dynamically quantized module): those are not stored in safetensors."""
    return any(not isinstance(t, torch.Tensor) or getattr(t, "is_quantized", False)
               for t in module.state_dict().values())
