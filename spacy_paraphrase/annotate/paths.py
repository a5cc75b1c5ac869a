"""The start of an annotate job, for both engines: the checks of the paths
made before anything is written (docs/annotate.md, "Paths"), in this order:
the settings, the input (opened once, as a ``dialogs.DialogCorpus``: its format
guessed and its options checked), the model, and the files the run writes.
The model must be a pipeline; each file the run writes is a regular file (or
new) in a folder that can exist, and none of them is one of the run's inputs
(compared on resolved paths and on the file itself, so links, ``..`` and a
second name of the same file are caught); the Ray engine's OUTPUT, a
directory, is checked by ``check_ray_output``.

Three checks made before writing live elsewhere, because each needs what
only its module knows: whether existing files may be written over, which
depends on the checkpoint beside them (``resume.JobFiles.open``: a run
with the same fingerprint resumes them, one that committed nothing is
replaced); and, for ``--output-format convokit``, that the input is a
ConvoKit directory and the output directory new, empty or this run's
(``convokit_output.check_paths``) and that no meta key it adds exists
already (``convokit_output.check_no_clash``: the keys are the ConvoKit
output's)."""
import os
from pathlib import Path
from typing import Iterable, Iterator, List, Optional, Sequence, Tuple

from spacy.util import is_package

from ..dialogs.pairing import DialogCorpus, SourceOptions
from ..dialogs.convokit import convokit_folder
from .heap import DEFAULT_HEAP_POLICY, check_heap_policy
from .record_format import part_files
from .resume import UNREADABLE, read_checkpoint


class PathError(ValueError):
    """A path of the run is of the wrong kind or would overwrite an input."""


def check_settings(*, batch_size: int, n_process: int = 1, gpu_id: int = -1, limit: Optional[int] = None,
                   heap: str = DEFAULT_HEAP_POLICY) -> None:
    """ValueError for settings no run can use."""
    check_heap_policy(heap)
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    if n_process < 1:
        raise ValueError(f"n_process must be at least 1, got {n_process}")
    if n_process > 1 and gpu_id >= 0:
        raise ValueError("n_process > 1 runs on CPU only; use one process with --gpu-id.")
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")


def open_job(model: str, input_path, source: Optional[SourceOptions], targets: Sequence[Tuple[str, Path]], *,
             batch_size: int, n_process: int = 1, gpu_id: int = -1, limit: Optional[int] = None,
             own: Iterable[Path] = (), heap: str = DEFAULT_HEAP_POLICY) -> DialogCorpus:
    """Every check of a run's start (module doc), before anything is
    written; returns the input opened (the caller closes it), or closes it
    when a later check fails. ``targets``: (what, path) of each file the run
    writes (``check_targets``)."""
    check_settings(batch_size=batch_size, n_process=n_process, gpu_id=gpu_id, limit=limit, heap=heap)
    if not Path(input_path).exists():
        raise FileNotFoundError(f"Input not found: {input_path}")
    corpus = DialogCorpus(input_path, source)
    try:
        check_model(model)
        check_targets(corpus, model, targets, own=own)
    except BaseException:
        corpus.close()
        raise
    return corpus


def check_model(model: str) -> None:
    """PathError unless ``model`` is a pipeline directory or an installed
    pipeline package, with a message that names the fix."""
    path = Path(model)
    if path.exists():
        if not path.is_dir():
            raise PathError(f"The model {model} is a file; pass a pipeline directory (e.g. training/contextdep_minilm_cpu/model-tuned).")
        if not (path / "config.cfg").is_file():
            raise PathError(
                f"The model {model} is not a spaCy pipeline (no config.cfg in it); pass the directory "
                "of a trained pipeline, e.g. training/contextdep_minilm_cpu/model-tuned (`spacy project run all` writes it)."
            )
        return
    if not is_package(model):
        raise PathError(
            f"The model {model} is neither a directory nor an installed pipeline package; pass a "
            "trained pipeline's directory (e.g. training/contextdep_minilm_cpu/model-tuned) or a package name."
        )


def _tree(path: Path) -> Iterator[Path]:
    if path.is_dir():
        for root, _, names in os.walk(path):
            for name in names:
                yield Path(root) / name
    elif path.exists():
        yield path


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file: the same resolved path, or (both
    existing) the same file under two names (a hard link)."""
    if a.resolve() == b.resolve():
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def check_writable_path(path: Path, what: str) -> None:
    """PathError unless ``path`` is a regular file or new, in a folder that
    exists or can be made (no file where a folder must be)."""
    if path.is_symlink() and not path.exists():
        raise PathError(f"{what} {path} is a symbolic link to nothing (a missing file or a loop); give the path of a file.")
    if path.exists() and not path.is_file():
        kind = "a directory" if path.is_dir() else "not a regular file (a device?)"
        raise PathError(f"{what} {path} is {kind}; give the path of a file.")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise PathError(f"{what} {path} cannot be made: {parent} is a file, not a folder.")
            break


def check_targets(corpus: DialogCorpus, model: str, targets: Sequence[Tuple[str, Path]],
                  own: Iterable[Path] = ()) -> None:
    """PathError when a file the run writes (``targets``: (what, path)) is of
    the wrong kind, is another target, or is one of the run's inputs: the
    files it reads (``DialogCorpus.files``), any file of a ConvoKit input directory
    (but for the ``own`` files an earlier run of this output wrote there) or
    of the model."""
    targets = [(what, Path(path)) for what, path in targets]
    for i, (what, path) in enumerate(targets):
        check_writable_path(path, what)
        for other_what, other in targets[:i]:
            if same_file(path, other):
                raise PathError(f"{what} {path} is the same file as {other_what.lower()} {other}; give another path.")
    own = [Path(p) for p in own]
    inputs = [(p, True) for p in corpus.files()]
    folder = convokit_folder(corpus.path)
    if folder is not None:
        inputs += [(p, False) for p in _tree(folder)]
    inputs += [(p, True) for p in _tree(Path(model))]
    for what, path in targets:
        for source, always in inputs:
            if same_file(path, source) and (always or not any(same_file(path, o) for o in own)):
                raise PathError(
                    f"{what} {path} is one of the run's inputs ({source}); annotate never writes over its "
                    "input: give another path."
                )


def check_ray_output(output: Path, errors: Path, *, overwrite: bool, inputs: Iterable[Path] = ()) -> None:
    """The Ray engine's OUTPUT (a directory of record parts, ``part_files``,
    not a file ``check_targets`` takes) and errors file, once the input is
    open: ValueError or PathError unless OUTPUT is a new or empty directory,
    or one of record parts only (``overwrite``: even with some), outside the
    run's ``inputs``, with the errors file outside it and empty or new
    (``overwrite``: any)."""
    if output.exists() and not output.is_dir():
        raise ValueError(f"OUTPUT {output} is a file; the Ray engine writes a directory of JSON Lines files.")
    inside = [p for p in inputs if output.resolve() in (p.resolve(), *p.resolve().parents)]
    if inside:
        raise PathError(f"OUTPUT {output} holds the run's input {inside[0]}; give a new directory.")
    if errors.resolve() == output.resolve() or errors.resolve().parent == output.resolve():
        raise ValueError(f"The errors file {errors} must lie outside OUTPUT ({output}).")
    others = [p for p in output.iterdir() if p not in part_files(output)] if output.is_dir() else []
    if others:
        raise ValueError(f"OUTPUT {output} holds other files ({others[0].name}); use an empty or new directory.")
    if not overwrite:
        for path, what in ((output, "OUTPUT"), (errors, "The errors file")):
            if (path.is_dir() and part_files(path)) or (path.is_file() and path.stat().st_size > 0):
                raise ValueError(f"{what} {path} exists; use --overwrite to replace it, or another path.")


def own_files(checkpoint: Path, output: Path, errors: Path) -> List[Path]:
    """The files an earlier run of this output wrote: OUTPUT and its
    checkpoint when the checkpoint exists, and the errors file when the
    checkpoint names it."""
    if not checkpoint.is_file():
        return []
    try:
        stored = read_checkpoint(checkpoint)["fingerprint"].get("errors")
    except UNREADABLE:
        stored = None
    return [output, checkpoint] + ([errors] if stored == str(errors.resolve()) else [])
