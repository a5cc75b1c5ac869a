"""The files of an annotate run (OUTPUT, the errors file, the checkpoint)
and resuming it (docs/annotate.md, "Resume").

A run writes its checkpoint before anything else (so even one killed before
its first buffer can be started again), and after each buffer of records is
written, both files are flushed and synced and then the checkpoint is
replaced atomically: pairs consumed, problems
seen, the byte sizes of both files, the counts so far and the run's
*fingerprint* (input, model and every option that changes the records). A run
started again with the same fingerprint truncates both files to the
checkpoint's sizes (dropping a half-written tail) and goes on after the
consumed pairs; a different fingerprint is refused (``--overwrite`` starts
over), unless the stopped run had committed nothing.
"""
import contextlib
import dataclasses
import json
import os
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, Mapping, Optional, Tuple

from ..dialogs.pairing import DialogCorpus
from ..saving import atomic_write
from .record_format import dumps

CHECKPOINT_VERSION = 2  # 2: records keep their turns' offsets


class ResumeError(ValueError):
    """The output exists but cannot be resumed (or is not this run's)."""


def checkpoint_path(output) -> Path:
    return Path(str(output) + ".checkpoint.json")


def default_errors_path(output) -> Path:
    return Path(str(output) + ".errors.jsonl")


# What reading a checkpoint raises when it cannot be read (gone, cut short,
# edited by hand, nested past the JSON decoder's depth).
UNREADABLE = (OSError, ValueError, KeyError, TypeError, RecursionError)


def read_checkpoint(checkpoint) -> Dict[str, Any]:
    """The one reader of a checkpoint (``JobFiles.save``'s ``version``,
    ``fingerprint`` and ``progress``), its fingerprint checked to be an
    object; raises one of ``UNREADABLE`` when it cannot be read."""
    saved = json.loads(Path(checkpoint).read_text(encoding="utf-8"))
    if not isinstance(saved["fingerprint"], dict):
        raise TypeError("the fingerprint is not an object")
    return saved


def run_fingerprint(output) -> Optional[Dict[str, Any]]:
    """The fingerprint (``fingerprint``) of the run whose checkpoint is
    beside ``output`` (``checkpoint_path``); None when there is none or it
    cannot be read."""
    try:
        return read_checkpoint(checkpoint_path(output))["fingerprint"]
    except UNREADABLE:
        return None


@dataclasses.dataclass
class Progress:
    """Where a run stands; saved in the checkpoint after each buffer."""

    consumed: int = 0
    problems_seen: int = 0
    written: int = 0
    paraphrases: int = 0
    skipped: int = 0
    malformed: int = 0
    role_dropped: int = 0  # pairs the role filter left out (absent in older checkpoints: 0)
    output_bytes: int = 0
    errors_bytes: int = 0
    seconds: float = 0.0
    done: bool = False


def model_signature(model: str) -> Dict[str, Any]:
    """The model as given, resolved when it is a path, with the modification
    times of its config and meta (a retrained model does not resume)."""
    path = Path(model)
    if not path.exists():
        return {"name": model}
    stamps = {name: (path / name).stat().st_mtime_ns for name in ("config.cfg", "meta.json") if (path / name).exists()}
    return {"path": str(path.resolve()), "stamps": stamps}


def fingerprint(model: str, corpus: DialogCorpus, *, with_probs: bool, limit: Optional[int], errors,
                output_format: str = "jsonl") -> Dict[str, Any]:
    """Everything that changes the records of a run (module doc): the
    input (size and modification time of each file it reads,
    ``DialogCorpus.files``: a changed input does not resume an old run), the model
    and the options."""
    return {
        "input": {"path": str(corpus.path.resolve()),
                  "files": [[p.name, (stat := p.stat()).st_size, stat.st_mtime_ns] for p in corpus.files()]},
        "model": model_signature(model),
        "source": dataclasses.asdict(corpus.options),
        "with_probs": with_probs,
        "limit": limit,
        "errors": str(Path(errors).resolve()),
        "output_format": output_format,
    }


def normalized(value: Any) -> Any:
    """``value`` as it reads back from JSON (tuples become lists, ...)."""
    return json.loads(json.dumps(value, sort_keys=True))


@contextlib.contextmanager
def naming(path: Path) -> Iterator[None]:
    """An OSError inside (a full disk, a lost permission) names ``path``
    when it names no file of its own."""
    try:
        yield
    except OSError as err:
        if err.filename is None:
            raise OSError(err.errno, err.strerror or str(err), str(path)) from None
        raise


class JobFiles:
    """OUTPUT, the errors file and the checkpoint of one run."""

    def __init__(self, output, errors, fingerprint: Mapping[str, Any], *, overwrite: bool = False):
        self.output = Path(output)
        self.errors = Path(errors)
        self.checkpoint = checkpoint_path(output)
        self.fingerprint = normalized(fingerprint)
        self.overwrite = overwrite
        self._out = None
        self._err = None

    def open(self) -> Progress:
        """Start fresh or resume (see the module doc); ResumeError on a mismatch."""
        if self.output.resolve() == self.errors.resolve():
            raise ResumeError(f"The errors file must differ from OUTPUT ({self.output}).")
        progress = None
        if self.checkpoint.exists() and not self.overwrite:
            progress, stored = self._resume_point()
            if progress is None and stored.get("errors") != str(self.errors.resolve()):
                # the stopped run committed nothing, but this errors file was not its own
                self._refuse_nonempty([(self.errors, "The errors file")], "is not this output's errors file")
        elif not self.overwrite:
            self._refuse_nonempty(
                [(self.output, "OUTPUT"), (self.errors, "The errors file")],
                f"has no checkpoint of an unfinished run beside it ({self.checkpoint.name})",
            )
        self.output.parent.mkdir(parents=True, exist_ok=True)
        self.errors.parent.mkdir(parents=True, exist_ok=True)
        if progress is None:
            # The checkpoint comes first: from here on a killed run (even one
            # killed before its first buffer) leaves a checkpoint to resume from.
            progress = Progress()
            self.save(progress)
        if progress.done:
            return progress
        for path, size in ((self.output, progress.output_bytes), (self.errors, progress.errors_bytes)):
            path.touch()
            os.truncate(path, size)
        self._out = open(self.output, "ab")
        self._err = open(self.errors, "ab")
        return progress

    @staticmethod
    def _refuse_nonempty(files, why: str) -> None:
        # here, not in paths.py: whether a file may be written over depends on the checkpoint (``open``)
        for path, what in files:
            if path.exists() and path.stat().st_size > 0:
                raise ResumeError(
                    f"{what} {path} exists and {why}; use --overwrite to replace it, or another path."
                )

    def _resume_point(self) -> Tuple[Optional[Progress], Dict[str, Any]]:
        """(the saved progress to go on from, the stored fingerprint); the
        progress is None when the stopped run had committed nothing (whatever
        its arguments: there is nothing to keep)."""
        try:
            saved = read_checkpoint(self.checkpoint)
            stored = saved["fingerprint"]
            progress = Progress(**saved["progress"])
            for f in dataclasses.fields(Progress):
                value = getattr(progress, f.name)
                if isinstance(value, bool) != (f.type is bool) or not isinstance(value, (int, float)):
                    raise TypeError(f"progress {f.name} is {value!r}")
        except UNREADABLE as err:
            raise ResumeError(
                f"The checkpoint {self.checkpoint} cannot be read ({err}); use --overwrite to start over."
            ) from None
        if progress == Progress():
            return None, stored
        if saved.get("version") != CHECKPOINT_VERSION:
            raise ResumeError(
                f"{self.output} was written by another version of spacy-paraphrase (checkpoint version "
                f"{saved.get('version')!r}, this one writes {CHECKPOINT_VERSION}), whose records differ; "
                "add --overwrite to start over."
            )
        if stored != self.fingerprint:
            changed = sorted(k for k in set(stored) | set(self.fingerprint) if stored.get(k) != self.fingerprint.get(k))
            raise ResumeError(
                f"{self.output} belongs to a run with other arguments or inputs (differs in: "
                f"{', '.join(changed) or 'checkpoint version'}). Rerun with the same arguments to "
                "resume it, or add --overwrite to start over."
            )
        for path, size in ((self.output, progress.output_bytes), (self.errors, progress.errors_bytes)):
            have = path.stat().st_size if path.exists() else -1
            if have < size:
                raise ResumeError(
                    f"{path} is shorter than its checkpoint says ({have} < {size} bytes): it was "
                    "changed after the run stopped. Use --overwrite to start over."
                )
        return progress, stored

    def write(self, records: Iterable[Mapping[str, Any]], entries: Iterable[Mapping[str, Any]]) -> None:
        """Append records to OUTPUT and entries to the errors file."""
        with naming(self.output):
            self._out.write(b"".join(dumps(r) for r in records))
        with naming(self.errors):
            self._err.write(b"".join(dumps(e) for e in entries))

    def commit(self, progress: Progress) -> None:
        """Make everything written so far durable, then record it in the checkpoint."""
        for f, path in ((self._out, self.output), (self._err, self.errors)):
            with naming(path):
                f.flush()
                os.fsync(f.fileno())
        progress.output_bytes = self._out.tell()
        progress.errors_bytes = self._err.tell()
        self.save(progress)

    def save(self, progress: Progress) -> None:
        state = {
            "version": CHECKPOINT_VERSION,
            "fingerprint": self.fingerprint,
            "progress": dataclasses.asdict(progress),
        }
        with naming(self.checkpoint):
            atomic_write(self.checkpoint, lambda tmp: tmp.write_text(json.dumps(state, indent=1), encoding="utf-8"))

    def close(self) -> None:
        for f in (self._out, self._err):
            if f is not None:
                try:
                    f.close()
                except OSError:
                    pass  # a buffered tail that could not be written: the checkpoint does not count it
        self._out = self._err = None
