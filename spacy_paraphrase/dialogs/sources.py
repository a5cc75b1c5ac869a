"""Streaming reads with byte offsets, shared by the dialog readers.

JSON Lines and CSV/TSV records are read one at a time together with the byte
range they came from, so a reader can index a file in a first pass and seek
back to the records of one conversation in a second pass
(``read_grouped``): memory then holds a few numbers per utterance, never the
texts of other conversations.
"""
import codecs
import csv
import io
import json
import math
from array import array
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from ..converters import pairs
from ..converters.pairs import QUOTING, ROW_HINT
from .records import Conversation, DialogFormatError, OnProblem, Problem, Utterance


class RecordError(ValueError):
    """One record is malformed; the message is the reason."""


def json_type(value: Any) -> str:
    """The JSON name of a value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def as_id(value: Any, what: str) -> str:
    """A non-empty id from a string or an integer."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise RecordError(f"{what} must be a string, got {json_type(value)}")
    if not value.strip():
        raise RecordError(f"{what} is empty")
    return value


def as_speaker(value: Any, what: str = "speaker") -> str:
    """A speaker name: any string (kept verbatim) or an integer."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise RecordError(f"{what} must be a string, got {json_type(value)}")
    return value


def as_text(value: Any, what: str = "text") -> str:
    """A text: a string, kept verbatim (empty and whitespace-only texts too)."""
    if not isinstance(value, str):
        raise RecordError(f"{what} must be a string, got {json_type(value)}")
    return value


def as_order(value: Any, what: str) -> float:
    """A finite number, or a string holding one."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise RecordError(f"{what} must be a number, got {json_type(value)}")
    try:
        number = float(value)
    except ValueError:
        raise RecordError(f"{what} must be a number, got {value!r:.40}") from None
    if not math.isfinite(number):
        raise RecordError(f"{what} must be a finite number, got {value!r:.40}")
    return number


def resolve_delimiter(path: Path, delimiter: Optional[str]) -> str:
    """``converters.pairs.resolve_delimiter``, failing with a DialogFormatError."""
    try:
        return pairs.resolve_delimiter(path, delimiter)
    except ValueError as err:
        raise DialogFormatError(f"{path}: {err}") from None


def quoting_mode(quoting: str) -> int:
    if quoting not in QUOTING:
        raise DialogFormatError(f"Unknown quoting {quoting!r}; choose one of {list(QUOTING)}.")
    return QUOTING[quoting]


def open_binary(path: Path):
    if not path.is_file():
        raise DialogFormatError(f"{path}: file not found")
    return open(path, "rb")


def _decode(raw: bytes, start: int) -> str:
    if start == 0 and raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8):]
    return raw.decode("utf-8")


def parse_json_line(raw: bytes, start: int) -> Any:
    """The JSON value of one line (RecordError if undecodable or invalid)."""
    try:
        text = _decode(raw, start)
    except UnicodeDecodeError as err:
        raise RecordError(f"not valid UTF-8 ({err.reason} at byte {err.start} of the line)") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise RecordError(f"not valid JSON ({err.msg} at column {err.colno}; a truncated line?)") from None


def iter_json_lines(path: Path, report: OnProblem) -> Iterator[Tuple[int, int, int, Any]]:
    """(line, start byte, end byte, value) of each non-blank line of a JSON
    Lines file; an unreadable line is reported and skipped."""
    with open_binary(path) as fh:
        end = 0
        for number, raw in enumerate(fh, start=1):
            start, end = end, end + len(raw)
            if not raw.strip() or raw.strip() == codecs.BOM_UTF8:
                continue
            try:
                value = parse_json_line(raw, start)
            except RecordError as err:
                report(Problem(str(path), number, str(err)))
                continue
            yield number, start, end, value


def read_json_at(fh, start: int, end: int) -> Any:
    fh.seek(start)
    return parse_json_line(fh.read(end - start), start)


class _Lines:
    """The decoded lines of a binary file for csv.reader, counting lines and
    bytes; an undecodable line is reported (its record is then left out) and
    decoded with replacement characters, so the quoting around it holds."""

    def __init__(self, fh, path: Path, report: OnProblem):
        self.fh, self.path, self.report = fh, path, report
        self.number = 0
        self.offset = 0
        self.last_bad = 0

    def __iter__(self):
        return self

    def __next__(self) -> str:
        raw = self.fh.readline()
        if not raw:
            raise StopIteration
        start = self.offset
        self.number += 1
        self.offset += len(raw)
        try:
            return _decode(raw, start)
        except UnicodeDecodeError as err:
            self.last_bad = self.number
            self.report(Problem(str(self.path), self.number, f"not valid UTF-8 ({err.reason})"))
            return raw.decode("utf-8", errors="replace")


def iter_csv_records(
    path: Path, delimiter: str, quoting: int, report: OnProblem
) -> Iterator[Tuple[int, int, int, List[str]]]:
    """(line where the record starts, start byte, end byte, fields) of each
    non-blank CSV/TSV record; an unreadable record is reported and skipped."""
    with open_binary(path) as fh:
        lines = _Lines(fh, path, report)
        reader = csv.reader(lines, delimiter=delimiter, quoting=quoting)
        while True:
            start, line = lines.offset, lines.number + 1
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error as err:
                report(Problem(str(path), line, f"unreadable record: {err} ({ROW_HINT})"))
                continue
            if lines.last_bad >= line:
                continue  # already reported
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            yield line, start, lines.offset, row


def read_csv_at(fh, start: int, end: int, delimiter: str, quoting: int) -> List[str]:
    fh.seek(start)
    text = _decode(fh.read(end - start), start)
    return next(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, quoting=quoting))


class GroupIndex:
    """Where the records of each conversation are (first pass of
    ``read_grouped``): per conversation, arrays of line numbers, byte ranges
    and order values; conversations in the order they first appear."""

    def __init__(self) -> None:
        self._groups: Dict[str, Tuple[array, array, array, array]] = {}

    def add(self, key: str, line: int, start: int, end: int, order: float) -> None:
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = (array("q"), array("q"), array("q"), array("d"))
        for column, value in zip(group, (line, start, end, order)):
            column.append(value)

    def __len__(self) -> int:
        return len(self._groups)

    def __iter__(self) -> Iterator[Tuple[str, List[Tuple[int, int, int]]]]:
        """(conversation id, [(line, start, end)] sorted by order, ties in file order)."""
        for key, (lines, starts, ends, orders) in self._groups.items():
            positions = sorted(range(len(lines)), key=lambda i: (orders[i], i))
            yield key, [(lines[i], starts[i], ends[i]) for i in positions]


# parse(record, line) -> (conversation id, order, utterance factory taking the position)
Parser = Callable[[Any, int], Tuple[str, float, Callable[[int], Utterance]]]


def read_grouped(
    path: Path,
    records: Iterator[Tuple[int, int, int, Any]],
    read_at: Callable[[Any, int, int], Any],
    parse: Parser,
    report: OnProblem,
) -> Iterator[Conversation]:
    """Conversations of a file with one utterance per record, in any order:
    a first pass checks every record and indexes it by conversation, a second
    pass seeks to the records of each conversation in turn. ``parse`` raises
    RecordError for a malformed record; a repeated utterance id within a
    conversation is reported and the later record left out."""
    index = GroupIndex()
    for line, start, end, record in records:
        try:
            conversation_id, order, _ = parse(record, line)
        except RecordError as err:
            report(Problem(str(path), line, str(err)))
            continue
        index.add(conversation_id, line, start, end, order)
    with open_binary(path) as fh:
        for conversation_id, positions in index:
            utterances: List[Utterance] = []
            seen = set()
            for line, start, end in positions:
                try:
                    _, _, make = parse(read_at(fh, start, end), line)
                except RecordError as err:  # the file changed between the passes
                    report(Problem(str(path), line, f"{err} (did the file change while reading?)"))
                    continue
                utterance = make(len(utterances))
                if utterance.id in seen:
                    report(Problem(str(path), line, f"utterance id {utterance.id!r} repeated in "
                                                    f"conversation {conversation_id!r}"))
                    continue
                seen.add(utterance.id)
                utterances.append(utterance)
            if utterances:
                yield Conversation(conversation_id, utterances, path=str(path), line=positions[0][0])
