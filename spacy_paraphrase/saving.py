"""Saving a changed setting of a pipeline without leaving a half-written
directory behind (``find-threshold --save`` / ``--save-to``).

- In place (``--save``): only what a setting changes is rewritten,
  ``config.cfg`` and the component's ``cfg`` file, each through a temporary
  file renamed over the old one; the weights are not touched (a killed run
  cannot truncate them, and a quantized copy keeps its int8 weights).
- Elsewhere (``--save-to DIR``): the whole pipeline is written to a staging
  folder beside DIR, which then replaces DIR. DIR must be new, empty or a
  pipeline directory (one with ``config.cfg``): anything else is refused, never
  replaced.
"""
import os
import shutil
import tempfile
from pathlib import Path

import srsly


class SaveError(ValueError):
    """The target cannot be written safely."""


def _replace_file(path: Path, write) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    write(tmp)
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)


def save_settings_in_place(nlp, model_dir: Path, pipe_name: str) -> None:
    """Rewrite ``config.cfg`` and ``pipe_name``'s ``cfg`` file (when it has
    one) of the pipeline at ``model_dir`` from ``nlp``, which was loaded from it."""
    model_dir = Path(model_dir)
    if not (model_dir / "config.cfg").is_file():
        raise SaveError(f"{model_dir} is not a pipeline directory (no config.cfg).")
    cfg_file = model_dir / pipe_name / "cfg"
    if cfg_file.is_file():
        cfg = nlp.get_pipe(pipe_name).cfg
        _replace_file(cfg_file, lambda p: srsly.write_json(p, cfg))
    _replace_file(model_dir / "config.cfg", lambda p: nlp.config.to_disk(p))


def save_pipeline_to(nlp, target: Path) -> None:
    """Write ``nlp`` to ``target`` (module doc): staged beside it, then swapped in."""
    target = Path(target)
    if target.exists() and (not target.is_dir() or (any(target.iterdir()) and not (target / "config.cfg").is_file())):
        raise SaveError(f"{target} exists and is not a pipeline directory: give a new directory.")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        nlp.to_disk(staging / "pipeline")
        if target.exists():
            (target).rename(staging / "old")
        (staging / "pipeline").rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
