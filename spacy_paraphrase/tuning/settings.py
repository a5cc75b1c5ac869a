"""Saving tuned settings into a pipeline (``tune --save`` / ``--save-to``),
keeping the component's ``cfg`` and ``config.cfg`` in agreement:

- In place (``--save``): only what a setting changes is rewritten,
  ``config.cfg`` and the component's ``cfg`` file, each by
  ``saving.atomic_write``; the weights are not touched (a killed run cannot
  truncate them, and a quantized copy keeps its int8 weights).
- Elsewhere (``--save-to DIR``): the whole pipeline is written by
  ``saving.save_pipeline_to``. DIR must be new, empty or a pipeline directory
  (one with ``config.cfg``): anything else is refused, never replaced.
"""
from pathlib import Path
from typing import Dict, Optional, Tuple

import srsly

from ..saving import atomic_write, check_save_target, save_pipeline_to


def save_target(model: str, save: bool = False, save_to: Optional[Path] = None) -> Tuple[Optional[Path], bool]:
    """(where the settings go, whether that is in place): ``save_to`` (in
    place when it is ``model`` itself), else ``model`` with ``save``, else
    nowhere (None)."""
    target = save_to if save_to is not None else (Path(model) if save else None)
    in_place = save_to is None or (Path(model).exists() and save_to.resolve() == Path(model).resolve())
    return target, in_place


def save_settings_in_place(nlp, model_dir: Path, pipe_name: str) -> None:
    """Rewrite ``config.cfg`` and ``pipe_name``'s ``cfg`` file (when it has
    one) of the pipeline at ``model_dir`` from ``nlp``, which was loaded from it."""
    model_dir = Path(model_dir)
    check_save_target(model_dir, in_place=True)
    cfg_file = model_dir / pipe_name / "cfg"
    if cfg_file.is_file():
        cfg = nlp.get_pipe(pipe_name).cfg
        atomic_write(cfg_file, lambda p: srsly.write_json(p, cfg))
    atomic_write(model_dir / "config.cfg", lambda p: nlp.config.to_disk(p))


def save_settings(nlp, model_dir: Path, pipe_name: str, settings: Dict[str, object], *, in_place: bool) -> None:
    """Set cfg keys of a component and save them, keeping the component's cfg
    and ``config.cfg`` in agreement: in place, only those two files are
    rewritten; else the whole pipeline is written to ``model_dir``
    (module doc). ``saving.SaveError`` when that is not safe."""
    pipe = nlp.get_pipe(pipe_name)
    for key, value in settings.items():
        pipe.cfg[key] = value
        nlp.get_pipe_config(pipe_name)[key] = value
    if in_place:
        save_settings_in_place(nlp, model_dir, pipe_name)
    else:
        save_pipeline_to(nlp, model_dir)
