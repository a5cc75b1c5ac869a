"""What an annotate run reads: the turn pairs of a dialog corpus (any format
of docs/dialog-formats.md), role-filtered, each as a validated row or a
reported skip. Shared by the local and the Ray engine."""
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from ..dialogs import FORMATS, DialogFormatError, filter_roles, guess_format, read_convokit_speakers, read_turn_pairs, role_getter
from ..dialogs.pairing import reader_parameters
from ..dialogs.turns import OnProblem, Problem, TurnPair
from .paths import CONVOKIT_READ, convokit_folder
from .record_format import invalid_side, pair_row

# spaCy's default nlp.max_length: the longest turn (in characters) a run
# takes when it has no pipeline at hand to ask (the Ray engine's staging).
MAX_TURN_CHARS = 10 ** 6
# How the reader options of the command line are spelled there.
OPTION_FLAGS = {"unify_names": "--unify-names", "by_timestamp": "--by-timestamp"}


@dataclass
class SourceOptions:
    """How pairs are read: format (None = guessed), pairing mode, role
    filter (``role_source`` as ``dialogs.role_getter``; ``role_patterns`` for
    source ``pattern``; ``first_roles`` / ``second_roles`` empty = any) and
    the format reader's own options (e.g. ``unify_names``, ``text1``)."""

    fmt: Optional[str] = None
    pairing: str = "consecutive"
    role_source: str = "speaker"
    role_patterns: Dict[str, str] = field(default_factory=dict)
    first_roles: List[str] = field(default_factory=list)
    second_roles: List[str] = field(default_factory=list)
    reader_options: Dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> Dict[str, Any]:
        return asdict(self)


def _flag(key: str) -> str:
    return OPTION_FLAGS.get(key, f"--reader-option {key}")


def _as_bool(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
        return value.lower() in ("true", "1", "yes")
    raise DialogFormatError(f"{_flag(key)} must be true or false, got {value!r}.")


def checked_source(path, options: SourceOptions) -> SourceOptions:
    """``options`` checked against the input's format before any work:
    DialogFormatError for a reader option that format's reader does not take
    (or of the wrong type) and ValueError for a bad role setting. Returns
    them with boolean reader options given as text (``true``) made booleans."""
    fmt = options.fmt or guess_format(path)
    if fmt not in FORMATS:
        raise DialogFormatError(f"Unknown dialog format {fmt!r}; choose one of {', '.join(FORMATS)}.")
    takes = reader_parameters(fmt)
    unknown = [key for key in options.reader_options if key not in takes]
    if unknown:
        guessed = "" if options.fmt else " (guessed from the input; --format sets it)"
        accepted = ", ".join(_flag(k) for k in sorted(takes)) or "no reader options"
        raise DialogFormatError(
            f"{', '.join(_flag(k) for k in unknown)}: not an option of the {fmt} format{guessed}; "
            f"it takes {accepted}."
        )
    reader_options = {}
    for key, value in options.reader_options.items():
        if isinstance(takes[key], bool):
            value = _as_bool(key, value)
        elif value is not None and not isinstance(value, str):
            raise DialogFormatError(f"{_flag(key)} must be text, got {value!r}.")
        reader_options[key] = value
    if options.role_patterns and options.role_source != "pattern":
        raise ValueError(
            f"--role-pattern is read with --role-source pattern only (the role source is "
            f"{options.role_source!r}, so the patterns would be ignored); add --role-source pattern."
        )
    if options.first_roles or options.second_roles:
        speakers = None
        if options.role_source.startswith("speaker-meta:"):
            speakers = read_convokit_speakers(path, fields=[])
        role_getter(options.role_source, patterns=options.role_patterns or None, speakers=speakers)
    checked = replace(options, reader_options=reader_options)
    _start_reader(path, checked)
    return checked


def _start_reader(path, options: SourceOptions) -> None:
    """Start the format's reader once and drop it, so that what it checks
    when started (a table's header and columns, for a guessed format too)
    fails here, before the run writes anything; malformed records are left
    to the run."""
    pairs = read_turn_pairs(path, options.fmt, mode=options.pairing, on_problem=lambda problem: None,
                            **options.reader_options)
    close = getattr(pairs, "close", None)
    if close is not None:
        close()


def read_pairs(path, options: SourceOptions, on_problem: OnProblem,
               on_drop: Optional[Callable[[TurnPair], None]] = None) -> Iterator[TurnPair]:
    """The corpus's turn pairs after the role filter (malformed records go to
    ``on_problem``, pairs the role filter leaves out to ``on_drop``)."""
    pairs = read_turn_pairs(
        path, options.fmt, mode=options.pairing, on_problem=on_problem, **options.reader_options
    )
    if not options.first_roles and not options.second_roles:
        return pairs
    speakers = None
    if options.role_source.startswith("speaker-meta:"):
        speakers = read_convokit_speakers(path)
    role_of = role_getter(options.role_source, patterns=options.role_patterns or None, speakers=speakers)
    return filter_roles(
        pairs, role_of, first=options.first_roles or None, second=options.second_roles or None,
        on_drop=on_drop,
    )


def count_pairs(path, options: SourceOptions, limit: Optional[int] = None) -> int:
    """How many pairs ``read_pairs`` yields (no model; malformed records are
    ignored here), at most ``limit``."""
    n = 0
    for _ in read_pairs(path, options, lambda problem: None):
        n += 1
        if limit is not None and n >= limit:
            break
    return n


def skip_entry(pair: TurnPair, row: Dict[str, Any], max_length: int = MAX_TURN_CHARS) -> Optional[Dict[str, Any]]:
    """The errors-file entry of a pair that cannot be annotated
    (``record_format.invalid_side``), with the file and line of that turn's
    first utterance; None for a valid pair."""
    found = invalid_side(row, max_length)
    if found is None:
        return None
    side, reason = found
    utterance = getattr(pair, side).utterances[0]
    return {
        "kind": "skipped",
        "pair_id": row["pair_id"],
        "conversation_id": row["conversation_id"],
        "side": side,
        "utterance_ids": row[side]["utterance_ids"],
        "path": utterance.path,
        "line": utterance.line,
        "reason": reason,
    }


def problem_entry(problem: Problem) -> Dict[str, Any]:
    """The errors-file entry of a malformed record."""
    return {"kind": "malformed", "path": problem.path, "line": problem.line, "reason": problem.reason}


def rows_and_skips(pairs: Iterator[TurnPair], max_length: int = MAX_TURN_CHARS
                   ) -> Iterator[Tuple[Dict[str, Any], Optional[Dict[str, Any]]]]:
    """``(row, skip entry or None)`` for each pair."""
    for pair in pairs:
        row = pair_row(pair)
        yield row, skip_entry(pair, row, max_length)


def input_signature(path) -> Dict[str, Any]:
    """Size and modification time of the input (of a ConvoKit directory: of
    each of its files a run reads, ``paths.CONVOKIT_READ``, so that files
    written beside them do not count): a changed input does not resume an
    old run."""
    path = Path(path)
    folder = convokit_folder(path) if path.is_dir() else None
    files = [folder / name for name in sorted(CONVOKIT_READ) if (folder / name).is_file()] if folder else [path]
    return {
        "path": str(path.resolve()),
        "files": [[p.name, p.stat().st_size, p.stat().st_mtime_ns] for p in files],
    }


__all__ = ["MAX_TURN_CHARS", "SourceOptions", "checked_source", "count_pairs",
           "input_signature", "problem_entry", "read_pairs", "rows_and_skips", "skip_entry"]
