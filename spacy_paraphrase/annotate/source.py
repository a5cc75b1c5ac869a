"""What an annotate run reads: the turn pairs of a dialog corpus (any format
of docs/dialog-formats.md), role-filtered, each as a validated row or a
reported skip. Shared by the local and the Ray engine."""
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

from ..dialogs import filter_roles, read_convokit_speakers, read_turn_pairs, role_getter
from ..dialogs.records import OnProblem, Problem, TurnPair
from .records import invalid_side, pair_row


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


def read_pairs(path, options: SourceOptions, on_problem: OnProblem) -> Iterator[TurnPair]:
    """The corpus's turn pairs after the role filter (malformed records go to
    ``on_problem``)."""
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
        pairs, role_of, first=options.first_roles or None, second=options.second_roles or None
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


def skip_entry(pair: TurnPair, row: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The errors-file entry of a pair that cannot be annotated (an empty,
    whitespace-only or invalid turn), with the file and line of that turn's
    first utterance; None for a valid pair."""
    found = invalid_side(row)
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


def rows_and_skips(pairs: Iterator[TurnPair]) -> Iterator[Tuple[Dict[str, Any], Optional[Dict[str, Any]]]]:
    """``(row, skip entry or None)`` for each pair."""
    for pair in pairs:
        row = pair_row(pair)
        yield row, skip_entry(pair, row)


def input_signature(path) -> Dict[str, Any]:
    """Size and modification time of the input (each file of a directory,
    not recursive): a changed input does not resume an old run."""
    path = Path(path)
    files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
    return {
        "path": str(path.resolve()),
        "files": [[p.name, p.stat().st_size, p.stat().st_mtime_ns] for p in files],
    }


__all__ = ["SourceOptions", "count_pairs", "input_signature", "problem_entry", "read_pairs",
           "rows_and_skips", "skip_entry"]
