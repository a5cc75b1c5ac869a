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
from array import array
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from ..converters import pairs
from ..converters.pairs import QUOTING, ROW_HINT
from .fields import RecordError
from .turns import Conversation, DialogFormatError, OnProblem, Problem, Utterance


# The deepest nesting of lists and objects a JSON record may have: deeper ones
# are malformed (Python's own JSON module gives up at about 1000 levels, and a
# record must still be written back out with room to spare).
MAX_JSON_DEPTH = 100


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


def not_a_file(path: Path) -> DialogFormatError:
    """The error for a path that is not a regular file (missing, or a pipe, a device, ...)."""
    if path.exists():
        return DialogFormatError(f"{path}: not a regular file (a directory, pipe or device?)")
    return DialogFormatError(f"{path}: file not found")


def open_binary(path: Path):
    if not path.is_file():
        raise not_a_file(path)
    return open(path, "rb")


def _decode(raw: bytes, start: int) -> str:
    if start == 0 and raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8):]
    return raw.decode("utf-8")


def nesting_depth(value: Any) -> int:
    """How deeply lists and objects nest in a JSON value (0 for a scalar);
    iterative, so any depth that parsed can be measured."""
    depth, level = 0, [(value, 1)]
    while level:
        item, d = level.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            depth = max(depth, d)
            level.extend((child, d + 1) for child in item if isinstance(child, (list, dict)))
    return depth


class _RepeatedKey(ValueError):
    pass


def _object(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    """A JSON object, refusing a key given twice (``json`` would keep the last silently)."""
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set = set()
        repeated = next(key for key, _ in pairs if key in seen or seen.add(key))
        raise _RepeatedKey(repeated)
    return value


def parse_json_line(raw: bytes, start: int) -> Any:
    """The JSON value of one line (RecordError if undecodable, invalid, with
    a key repeated in an object, or nested deeper than MAX_JSON_DEPTH)."""
    try:
        text = _decode(raw, start)
    except UnicodeDecodeError as err:
        raise RecordError(f"not valid UTF-8 ({err.reason} at byte {err.start} of the line)") from None
    try:
        value = json.loads(text, object_pairs_hook=_object)
    except _RepeatedKey as err:
        raise RecordError(f"key {err.args[0]!r} given twice in one object (which value is meant?)") from None
    except json.JSONDecodeError as err:
        raise RecordError(f"not valid JSON ({err.msg} at column {err.colno}; a truncated line?)") from None
    except RecursionError:
        value = None
    else:
        # only a line with many brackets can nest deeply: the others cost a count
        if text.count("[") + text.count("{") <= MAX_JSON_DEPTH or nesting_depth(value) <= MAX_JSON_DEPTH:
            return value
    raise RecordError(f"lists and objects nested more than {MAX_JSON_DEPTH} levels deep")


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
    decoded with replacement characters, so the quoting around it holds.
    ``starts`` holds the start byte of each line of the current record, so
    that reading can go on at its second line (``restart``)."""

    def __init__(self, fh, path: Path, report: OnProblem):
        self.fh, self.path, self.report = fh, path, report
        self.number = 0
        self.offset = 0
        self.last_bad = 0
        self.reported: set = set()
        self.starts: List[int] = []

    def __iter__(self):
        return self

    def __next__(self) -> str:
        raw = self.fh.readline()
        if not raw:
            raise StopIteration
        start = self.offset
        self.starts.append(start)
        self.number += 1
        self.offset += len(raw)
        try:
            return _decode(raw, start)
        except UnicodeDecodeError as err:
            self.last_bad = self.number
            if self.number not in self.reported:  # a line read again after a restart
                self.reported.add(self.number)
                self.report(Problem(str(self.path), self.number, f"not valid UTF-8 ({err.reason})"))
            return raw.decode("utf-8", errors="replace")

    def restart(self, line: int) -> None:
        """Go back to the start of ``line``, the second line of the current record."""
        self.fh.seek(self.starts[1])
        self.number, self.offset = line - 1, self.starts[1]
        self.last_bad = 0  # a bad line further on is met (and known) again


def _csv_reader(lines, delimiter: str, quoting: int):
    # strict: a quote left open (the record would run to the end of the file)
    # or text after a closing quote is an error, never a silent guess
    return csv.reader(lines, delimiter=delimiter, quoting=quoting, strict=True)


class CsvRecords:
    """(line where the record starts, start byte, end byte, fields) of each
    non-blank CSV/TSV record; an unreadable record is reported and skipped.

    Records are read strictly (a quote left open, text after a closing
    quote: malformed). A record over several lines that is unreadable, or
    whose number of fields is not ``width`` (set once the header is read), is
    reported at its first line and reading goes on at its second line: a
    stray quote never swallows the rows after it."""

    def __init__(self, path: Path, delimiter: str, quoting: int, report: OnProblem):
        self.path, self.delimiter, self.quoting, self.report = path, delimiter, quoting, report
        self.width: Optional[int] = None
        self._records = self._read()

    def __iter__(self):
        return self

    def __next__(self) -> Tuple[int, int, int, List[str]]:
        return next(self._records)

    def _read(self) -> Iterator[Tuple[int, int, int, List[str]]]:
        path = self.path
        with open_binary(path) as fh:
            lines = _Lines(fh, path, self.report)
            reader = _csv_reader(lines, self.delimiter, self.quoting)
            while True:
                start, line = lines.offset, lines.number + 1
                lines.starts = []
                why = None
                try:
                    row = next(reader)
                except StopIteration:
                    return
                except csv.Error as err:
                    row, why = None, f"unreadable record: {err} ({ROW_HINT})"
                several = lines.number > line
                if row is not None and lines.last_bad >= line and not several:
                    continue  # already reported
                if row is not None and self.width is not None and len(row) != self.width and several:
                    why = f"expected {self.width} fields (as the header), found {len(row)} ({ROW_HINT})"
                if row is not None and why is None and lines.last_bad >= line:
                    continue  # already reported
                if why is not None:
                    if several:
                        why += f"; the record ran on to line {lines.number}, reading goes on at line {line + 1}"
                        lines.restart(line + 1)
                        reader = _csv_reader(lines, self.delimiter, self.quoting)
                    if lines.last_bad != line:  # else reported already, as not valid UTF-8
                        self.report(Problem(str(path), line, why))
                    continue
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue
                yield line, start, lines.offset, row


def iter_csv_records(path: Path, delimiter: str, quoting: int, report: OnProblem) -> CsvRecords:
    """``CsvRecords(path, delimiter, quoting, report)``."""
    return CsvRecords(path, delimiter, quoting, report)


def read_csv_at(fh, start: int, end: int, delimiter: str, quoting: int) -> List[str]:
    fh.seek(start)
    text = _decode(fh.read(end - start), start)
    return next(_csv_reader(io.StringIO(text, newline=""), delimiter, quoting))


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
