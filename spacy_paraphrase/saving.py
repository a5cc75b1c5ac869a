"""Writing files and directories without leaving half of one behind: the
package's helper for a file or directory written whole.

A checkpoint, saved settings, a ConvoKit output's merged files, a report, a
coding sheet and a pipeline are written through it. Files written as a
stream are not, each for its own reason: annotate's records and errors files are appended and synced, and the
checkpoint (``annotate/resume.py``, written here) says how much of them
counts; the Ray engine's staging shards (``annotate/staging.py``) are
temporary, and its errors file and record parts (``annotate/ray_engine.py``)
are written again from the start by a run repeated with ``--overwrite``
(the Ray engine does not resume).

- ``atomic_write(path, write)``: ``write(tmp)`` to a temporary file beside
  ``path``, synced, then renamed over ``path`` (a killed write leaves the old
  file or none, never half of one; a failed one leaves the old file and no
  temporary file).
- ``staged_swap(target, build)``: ``build(new)`` makes a directory in a staging
  folder beside ``target`` (``swap_staging_dir``), synced, then swapped in for
  ``target``; when the swap fails the old ``target`` is put back. The staging
  folder is always removed, and one a killed run left behind is removed by the
  next run writing to the same target.

- ``save_pipeline_to(nlp, target)``: a whole pipeline written by
  ``staged_swap``; the target must be new, empty or a pipeline directory
  (one with ``config.cfg``): anything else is refused, never replaced
  (``check_save_target``). Saving changed settings (``tune --save``) is
  ``tuning/settings.py``.
"""
import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Callable, Optional


class SaveError(ValueError):
    """The target cannot be written safely."""


def atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    """Write the file ``path`` atomically: ``write(tmp)`` creates
    ``.{name}.{8 hex}.tmp`` beside ``path`` (a unique name: concurrent writers
    of the same path do not share it), which is synced, then renamed over
    ``path``. If ``write`` (or the sync, or the rename) fails, the temporary
    file is removed and ``path`` is left as it was."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        write(tmp)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise



def check_save_target(target: Path, *, in_place: bool) -> None:
    """SaveError unless ``target`` can be saved to: ``in_place``, a pipeline
    directory; else new, empty or a pipeline directory. Called
    before any work, so a refused target costs nothing."""
    target = Path(target)
    if in_place:
        if not (target / "config.cfg").is_file():
            raise SaveError(f"{target} is not a pipeline directory (no config.cfg): use --save-to DIR.")
    elif target.exists() and (not target.is_dir() or (any(target.iterdir()) and not (target / "config.cfg").is_file())):
        raise SaveError(f"{target} exists and is not a pipeline directory: give a new directory.")


STAGING_MARK = ".spacy_paraphrase_staging"


def swap_staging_dir(target: Path, *, clear_left: bool = True) -> Path:
    """A new staging folder beside ``target`` (``.{name}.XXXXXXXX``), marked as
    ours; with ``clear_left``, the folders a killed earlier run left for
    ``target`` are removed first (only those carrying this target's mark:
    nothing else is touched)."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    mark = f"staging for {target.name}; safe to delete\n"
    for old in target.parent.glob(f".{target.name}.*") if clear_left else ():
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


def staged_swap(
    target: Path,
    build: Callable[[Path], None],
    *,
    keep_concurrent: Optional[Callable[[Path], bool]] = None,
) -> bool:
    """Replace the directory ``target`` (or create it) by what ``build(new)``
    makes, never leaving half of it at ``target``: ``new`` (not created yet)
    is in a staging folder beside ``target`` (``swap_staging_dir``); once
    ``build`` returns, its files are synced, the current ``target`` (if any)
    is moved into the staging folder and ``new`` renamed to ``target``. When
    that rename fails, the old ``target`` is put back and the error raised;
    with ``keep_concurrent`` (other processes may write ``target`` at the same
    time: their staging folders are left alone), a ``target`` that one of them
    put there in the meantime is kept instead when ``keep_concurrent(target)``
    is true (then the result is False). The staging folder (with the old ``target``
    and whatever ``build`` left when it raised) is always removed. Killed
    between the two renames, the old ``target`` is left in
    ``.{target name}.*/old`` beside it (until the next swap to ``target``
    clears it, unless ``keep_concurrent`` is given). Returns True when ``new``
    is at ``target``."""
    target = Path(target)
    staging = swap_staging_dir(target, clear_left=keep_concurrent is None)
    new, old = staging / "new", staging / "old"
    try:
        build(new)
        _fsync_tree(new)
        if target.exists():
            target.rename(old)
        try:
            new.rename(target)
        except OSError:
            if keep_concurrent is not None and target.exists() and keep_concurrent(target):
                return False
            if old.exists():
                old.rename(target)
            raise
        return True
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def save_pipeline_to(nlp, target: Path) -> None:
    """Write ``nlp`` to ``target`` (module doc) by ``staged_swap``: a refused
    target (``check_save_target``) is an error before any work."""
    target = Path(target)
    check_save_target(target, in_place=False)
    staged_swap(target, nlp.to_disk)
