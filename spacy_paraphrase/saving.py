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

``swap_staging_dir`` is shared with ``quantize``: a staging folder a killed run
left behind is removed by the next run writing to the same target.
"""
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

import srsly


class SaveError(ValueError):
    """The target cannot be written safely."""


def replace_file(path: Path, write: Callable[[Path], None]) -> None:
    """Write a file atomically: ``write(tmp)`` to ``.{name}.tmp`` beside
    ``path``, synced, then renamed over ``path`` (a killed write leaves the old
    file or none, never half of one)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    write(tmp)
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)


def save_settings_in_place(nlp, model_dir: Path, pipe_name: str) -> None:
    """Rewrite ``config.cfg`` and ``pipe_name``'s ``cfg`` file (when it has
    one) of the pipeline at ``model_dir`` from ``nlp``, which was loaded from it."""
    model_dir = Path(model_dir)
    check_save_target(model_dir, in_place=True)
    cfg_file = model_dir / pipe_name / "cfg"
    if cfg_file.is_file():
        cfg = nlp.get_pipe(pipe_name).cfg
        replace_file(cfg_file, lambda p: srsly.write_json(p, cfg))
    replace_file(model_dir / "config.cfg", lambda p: nlp.config.to_disk(p))


def check_save_target(target: Path, *, in_place: bool) -> None:
    """SaveError unless ``target`` can be saved to (module doc); called
    before any work, so a refused target costs nothing."""
    target = Path(target)
    if in_place:
        if not (target / "config.cfg").is_file():
            raise SaveError(f"{target} is not a pipeline directory (no config.cfg): use --save-to DIR.")
    elif target.exists() and (not target.is_dir() or (any(target.iterdir()) and not (target / "config.cfg").is_file())):
        raise SaveError(f"{target} exists and is not a pipeline directory: give a new directory.")


STAGING_MARK = ".spacy_paraphrase_staging"


def swap_staging_dir(target: Path) -> Path:
    """A new staging folder beside ``target`` (``.{name}.XXXXXXXX``), marked as
    ours; the folders a killed earlier run left for ``target`` are removed
    first (only those carrying this target's mark: nothing else is touched)."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    mark = f"staging for {target.name}; safe to delete\n"
    for old in target.parent.glob(f".{target.name}.*"):
        if (old / STAGING_MARK).is_file() and (old / STAGING_MARK).read_text(errors="replace") == mark:
            shutil.rmtree(old, ignore_errors=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    (staging / STAGING_MARK).write_text(mark)
    return staging


def _fsync_tree(folder: Path) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            with open(path, "rb") as f:
                os.fsync(f.fileno())


def save_pipeline_to(nlp, target: Path) -> None:
    """Write ``nlp`` to ``target`` (module doc): staged beside it, made
    durable, then swapped in. Killed between the two renames of the swap, the
    earlier pipeline is left in ``.{target name}.*/old`` beside ``target``
    (until the next save to ``target`` clears it)."""
    target = Path(target)
    check_save_target(target, in_place=False)
    staging = swap_staging_dir(target)
    try:
        nlp.to_disk(staging / "pipeline")
        _fsync_tree(staging / "pipeline")
        if target.exists():
            target.rename(staging / "old")
        try:
            (staging / "pipeline").rename(target)
        except OSError:
            if (staging / "old").exists():
                (staging / "old").rename(target)
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
