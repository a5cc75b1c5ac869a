"""Shared pieces of the converters: errors, bad-row bookkeeping, file reading."""
import csv
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Tuple


class ConversionError(ValueError):
    """A row (or the file) cannot be converted. Names file, line and reason."""

    def __init__(self, path, line: Optional[int], reason: str):
        self.path = str(path)
        self.line = line
        self.reason = reason
        where = f"{self.path}, line {line}" if line is not None else self.path
        super().__init__(f"{where}: {reason}")


@dataclass
class ConversionReport:
    """What a conversion kept and left out."""

    n_rows: int = 0
    n_docs: int = 0
    skipped: List[ConversionError] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)

    def bad(self, error: ConversionError, skip_bad: bool) -> None:
        if not skip_bad:
            raise error
        self.skipped.append(error)


def open_text(path: Path):
    """Open a UTF-8 text file; undecodable bytes raise a ConversionError with
    the line number."""
    path = Path(path)
    if not path.exists():
        raise ConversionError(path, None, "file not found")
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise ConversionError(path, line, f"not valid UTF-8 ({err.reason} at byte {err.start})") from None


def iter_records(path: Path, delimiter: str, quoting=csv.QUOTE_MINIMAL) -> Iterator[Tuple[int, List[str]]]:
    """(line where the record starts, fields) of a CSV/TSV file; blank lines
    are skipped, an unreadable record raises ConversionError with its line."""
    text = open_text(path)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, quoting=quoting)
    start = 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as err:
            raise ConversionError(path, start, f"unreadable row: {err}") from None
        line = start
        start = reader.line_num + 1
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        yield line, row


def read_delimited(
    path: Path, delimiter: str, required: Sequence[str], quoting=csv.QUOTE_MINIMAL
) -> Iterator[Tuple[int, Dict[str, str]]]:
    """Yield (line number where the record starts, row) from a CSV/TSV file
    with a header, checking the header and each row's field count."""
    records = iter_records(path, delimiter, quoting)
    try:
        _, header = next(records)
    except StopIteration:
        raise ConversionError(path, 1, "the file is empty (no header)") from None
    missing = [c for c in required if c not in header]
    if missing:
        raise ConversionError(
            path,
            1,
            f"missing column(s) {missing}; found {header!r} "
            f"(is the delimiter {delimiter!r} right?)",
        )
    for line, row in records:
        if len(row) != len(header):
            yield line, {"__error__": f"expected {len(header)} fields, found {len(row)}"}
            continue
        yield line, dict(zip(header, row))
