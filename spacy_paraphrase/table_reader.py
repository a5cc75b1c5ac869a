"""The one reader of tabular files: CSV, TSV and JSON Lines, record by record.

Both the dataset converters (``converters/``) and the dialog readers
(``dialogs/``) read their files through this module. A record comes with the
line where it starts and the byte range it came from, so a reader can index a
file in a first pass and seek back to a record later (``read_csv_at``,
``read_json_at``; ``dialogs/streaming.read_grouped``). The functions read from
a file opened in binary mode: the caller opens it and decides what a missing
file means. A malformed record is handed to ``on_bad(line, reason)`` and
reading goes on; what is bad is the same for every caller:

- a line that is not valid UTF-8;
- a JSON line that does not parse, repeats a key in an object or nests lists
  and objects more than ``MAX_JSON_DEPTH`` levels deep;
- a CSV/TSV record that csv reads strictly as unreadable (a quote left open,
  text after a closing quote), or that runs over several lines with a number
  of fields other than ``width``: it is reported at its first line and reading
  goes on at its second line, so a stray quote never swallows the rows after it.
"""
import codecs
import csv
import io
import json
import re
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

# A turn can be a whole monologue: lift the csv module's 128 KiB field limit
# (process-wide: csv has no per-reader setting).
csv.field_size_limit(2**31 - 1)

# The deepest nesting of lists and objects a JSON record may have: deeper ones
# are malformed (Python's own JSON module gives up at about 1000 levels, and a
# record must still be written back out with room to spare).
MAX_JSON_DEPTH = 100

QUOTING = {"minimal": csv.QUOTE_MINIMAL, "none": csv.QUOTE_NONE}
DELIMITER_NAMES = {"tab": "\t", "\\t": "\t", "comma": ",", "jsonl": "jsonl"}
EXTENSIONS = {
    ".csv": ",",
    ".tsv": "\t",
    ".txt": "\t",
    ".tab": "\t",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
}
ROW_HINT = "a truncated line, or a text holding the delimiter or an unclosed quote?"

# on_bad(line where the record starts, reason)
OnBad = Callable[[int, str], None]

# -- pair files: the defaults of both readers of one (``converters/pairs.py``
# for training Docs, ``dialogs/tables.read_pair_file`` for annotate) ----------

# The text columns of a pair file found without options (case-insensitive), in
# this order of preference.
PAIR_COLUMNS = (("sentence1", "sentence2"), ("text1", "text2"), ("#1 String", "#2 String"))
# The id column of a pair file used without options, when it has one.
PAIR_ID_COLUMN = "id"


def find_pair_columns(names: Sequence[str]) -> Optional[Tuple[str, str]]:
    """The first of PAIR_COLUMNS present in ``names`` (as spelled there)."""
    folded = {name.casefold(): name for name in names}
    for first, second in PAIR_COLUMNS:
        if first.casefold() in folded and second.casefold() in folded:
            return folded[first.casefold()], folded[second.casefold()]
    return None


def no_pair_columns(found: Sequence[str]) -> str:
    """The reason given when ``find_pair_columns`` finds none in ``found``."""
    return f"no pair text columns (looked for {[list(c) for c in PAIR_COLUMNS]}); found {list(found)!r}"


def made_pair_id(path: Path, line: int) -> str:
    """The id of a pair read from a row without an id: ``{file stem}:{line}``
    (the line where the row starts), the same from both readers."""
    return f"{path.stem}:{line}"


def made_pair_line(path: Path, pair_id: str) -> Optional[int]:
    """The line ``made_pair_id`` made ``pair_id`` from, or None when it is
    not one of its ids."""
    prefix = f"{path.stem}:"
    rest = pair_id[len(prefix):] if pair_id.startswith(prefix) else ""
    return int(rest) if rest.isdigit() and str(int(rest)) == rest else None


class InputRowError(ValueError):
    """One record (row or line) of an input file is malformed; the message
    is the reason. Not ``record_format.RecordsFileError``, an annotate
    output that cannot be read."""


def file_problem(path: Path) -> Optional[str]:
    """Why ``path`` cannot be read as a table (missing, or a directory, pipe or
    device), or None for a regular file; each caller raises its own error."""
    path = Path(path)
    if path.is_file():
        return None
    return "not a regular file (a directory, pipe or device?)" if path.exists() else "file not found"


def resolve_delimiter(path: Path, delimiter: Optional[str]) -> str:
    """``"jsonl"`` or a one-character delimiter, from the option (``","``,
    ``"\\t"``, ``"tab"``, ``"comma"``, ``"jsonl"``, any one character) or, when
    it is None, from the file's extension; ValueError otherwise."""
    if delimiter is None:
        suffix = Path(path).suffix.lower()
        if suffix not in EXTENSIONS:
            raise ValueError(
                f"Cannot tell the format of {Path(path).name!r} from its extension; pass delimiter "
                "(',', '\\t', 'tab', 'comma' or 'jsonl')."
            )
        return EXTENSIONS[suffix]
    delimiter = DELIMITER_NAMES.get(delimiter.lower(), delimiter)
    if delimiter != "jsonl" and len(delimiter) != 1:
        raise ValueError(f"delimiter must be one character, 'tab', 'comma' or 'jsonl'; got {delimiter!r}")
    return delimiter


def quoting_mode(quoting: str) -> int:
    """The csv module's constant for ``"minimal"`` or ``"none"``; ValueError otherwise."""
    if quoting not in QUOTING:
        raise ValueError(f"Unknown quoting {quoting!r}; choose one of {list(QUOTING)}.")
    return QUOTING[quoting]


# a line ends at \n, \r\n or a lone \r (old Mac files): split after a \r not followed by \n
_LONE_CR = re.compile(rb"(?<=\r)(?!\n)")


def binary_lines(fh) -> Iterator[bytes]:
    """The lines of a binary file with their ends (``\n``, ``\r\n`` or a lone
    ``\r``); nothing else is a line end (not U+2028 or \x85 inside a text)."""
    for chunk in fh:
        if b"\r" in chunk:
            yield from (line for line in _LONE_CR.split(chunk) if line)
        else:
            yield chunk


def _decode(raw: bytes, start: int) -> str:
    if start == 0 and raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8):]
    return raw.decode("utf-8")


# -- JSON Lines -----------------------------------------------------------------


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
    """The JSON value of one line (InputRowError if undecodable, invalid, with
    a key repeated in an object, or nested deeper than MAX_JSON_DEPTH)."""
    try:
        text = _decode(raw, start)
    except UnicodeDecodeError as err:
        raise InputRowError(f"not valid UTF-8 ({err.reason} at byte {err.start} of the line)") from None
    try:
        value = json.loads(text, object_pairs_hook=_object)
    except _RepeatedKey as err:
        raise InputRowError(f"key {err.args[0]!r} given twice in one object (which value is meant?)") from None
    except json.JSONDecodeError as err:
        raise InputRowError(f"not valid JSON ({err.msg} at column {err.colno}; a truncated line?)") from None
    except RecursionError:
        value = None
    else:
        # only a line with many brackets can nest deeply: the others cost a count
        if text.count("[") + text.count("{") <= MAX_JSON_DEPTH or nesting_depth(value) <= MAX_JSON_DEPTH:
            return value
    raise InputRowError(f"lists and objects nested more than {MAX_JSON_DEPTH} levels deep")


def json_lines(fh, on_bad: OnBad) -> Iterator[Tuple[int, int, int, Any]]:
    """(line, start byte, end byte, value) of each non-blank line of a JSON
    Lines file opened in binary mode (closed when read to the end); an
    unreadable line goes to ``on_bad``."""
    with fh:
        end = 0
        for number, raw in enumerate(binary_lines(fh), start=1):
            start, end = end, end + len(raw)
            if not raw.strip() or raw.strip() == codecs.BOM_UTF8:
                continue
            try:
                value = parse_json_line(raw, start)
            except InputRowError as err:
                on_bad(number, str(err))
                continue
            yield number, start, end, value


def read_json_at(fh, start: int, end: int) -> Any:
    """The JSON value of the line at bytes ``start:end`` (InputRowError if malformed)."""
    fh.seek(start)
    return parse_json_line(fh.read(end - start), start)


# -- CSV / TSV --------------------------------------------------------------------


class _Lines:
    """The decoded lines of a binary file for csv.reader, counting lines and
    bytes; an undecodable line is reported (its record is then left out) and
    decoded with replacement characters, so the quoting around it holds.
    ``starts`` holds the start byte of each line of the current record, so
    that reading can go on at its second line (``restart``)."""

    def __init__(self, fh, on_bad: OnBad):
        self.fh, self.on_bad = fh, on_bad
        self.raw = binary_lines(fh)
        self.number = 0
        self.offset = 0
        self.last_bad = 0
        self.reported: set = set()
        self.starts: List[int] = []

    def __iter__(self):
        return self

    def __next__(self) -> str:
        raw = next(self.raw)
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
                self.on_bad(self.number, f"not valid UTF-8 ({err.reason})")
            return raw.decode("utf-8", errors="replace")

    def restart(self, line: int) -> None:
        """Go back to the start of ``line``, the second line of the current record."""
        self.fh.seek(self.starts[1])
        self.raw = binary_lines(self.fh)
        self.number, self.offset = line - 1, self.starts[1]
        self.last_bad = 0  # a bad line further on is met (and known) again


def _csv_reader(lines, delimiter: str, quoting: int):
    # strict: a quote left open (the record would run to the end of the file)
    # or text after a closing quote is an error, never a silent guess
    return csv.reader(lines, delimiter=delimiter, quoting=quoting, strict=True)


class CsvRecords:
    """(line where the record starts, start byte, end byte, fields) of each
    non-blank record of a CSV/TSV file opened in binary mode (closed when the
    records are read to the end, or by ``close``: records dropped before
    their end keep the file open until the garbage collector finds them);
    a malformed record goes to ``on_bad`` (see the module doc). ``width``:
    the number of fields a record spread over several lines must have (set
    it once the header is read)."""

    def __init__(self, fh, delimiter: str, quoting: int, on_bad: OnBad):
        self.fh, self.delimiter, self.quoting, self.on_bad = fh, delimiter, quoting, on_bad
        self.width: Optional[int] = None
        self._records = self._read()

    def __iter__(self):
        return self

    def __next__(self) -> Tuple[int, int, int, List[str]]:
        return next(self._records)

    def close(self) -> None:
        """Close the file; the records end here."""
        self._records.close()
        self.fh.close()

    def _read(self) -> Iterator[Tuple[int, int, int, List[str]]]:
        with self.fh:  # closed when read to the end or closed
            yield from self._records_of(self.fh)

    def _records_of(self, fh) -> Iterator[Tuple[int, int, int, List[str]]]:
        lines = _Lines(fh, self.on_bad)
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
                    self.on_bad(line, why)
                continue
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            yield line, start, lines.offset, row


def read_csv_at(fh, start: int, end: int, delimiter: str, quoting: int) -> List[str]:
    """The fields of the record at bytes ``start:end``."""
    fh.seek(start)
    text = _decode(fh.read(end - start), start)
    return next(_csv_reader(io.StringIO(text, newline=""), delimiter, quoting))
