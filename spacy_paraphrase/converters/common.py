"""Shared pieces of the converters: errors, bad-row bookkeeping, rows of a
table (read by ``spacy_paraphrase/table_reader.py``, the package's one reader
of CSV, TSV and JSON Lines) and the row loop (read, check, build, report).
The ``convert <format>`` sub-commands, writing the DocBin and the summary: ``spacy_paraphrase/cli/convert.py``."""
import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from spacy.tokens import Doc
from spacy.vocab import Vocab

from ..table_reader import ROW_HINT, CsvRecords, file_problem


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


def open_file(path: Path):
    """``path`` opened in binary mode for the table reader; ConversionError if
    it is not a regular file."""
    problem = file_problem(path)
    if problem is not None:
        raise ConversionError(path, None, problem)
    return open(path, "rb")


class PendingRows:
    """The table reader's ``on_bad``: keeps the malformed records met while
    reading the next good one, so they can be yielded in file order."""

    def __init__(self) -> None:
        self.rows: List[Tuple[int, "BadRow"]] = []

    def __call__(self, line: int, reason: str) -> None:
        self.rows.append((line, BadRow(reason)))

    def flush(self) -> Iterator[Tuple[int, "BadRow"]]:
        rows, self.rows = self.rows, []
        yield from rows


Column = Union[str, int]


@dataclass(frozen=True)
class BadRow:
    """A record the reader could not turn into fields (too few or too many, bad
    JSON ...): the reason, to be reported with the record's line."""

    reason: str


Row = Union[Dict[str, str], BadRow]


def as_index(column: Column) -> Optional[int]:
    """A 0-based column index written as an int or a string of digits, else None."""
    if isinstance(column, bool):
        return None
    if isinstance(column, int):
        return column
    if isinstance(column, str) and column.strip().isdigit():
        return int(column.strip())
    return None


def read_table(
    path: Path,
    delimiter: str,
    columns: Union[Sequence[str], Dict[str, Column], Callable[[List[str]], Dict[str, Column]]],
    *,
    header: bool = True,
    quoting: int = csv.QUOTE_MINIMAL,
) -> Iterator[Tuple[int, Row]]:
    """Yield (line where the record starts, row) for each data record of a
    CSV/TSV file, read by ``table_reader.CsvRecords``: ``{role: value}`` for the
    roles of ``columns`` (a dict role -> header name or 0-based index; a list of
    names stands for itself; with a header, also a function of the header's
    names returning that dict, or raising ValueError), or a ``BadRow`` for a
    record the table reader finds malformed or whose field count differs from
    the header's (or, without a header, the first record's). A missing column
    raises ConversionError."""
    if isinstance(columns, (list, tuple)):
        columns = {name: name for name in columns}
    pending = PendingRows()
    records = CsvRecords(open_file(path), delimiter, quoting, pending)
    where: Dict[str, int] = {}
    n_fields: Optional[int] = None
    first_line = None
    if header:
        names = None
        for first_line, _, _, names in records:
            names = [name.strip() for name in names]  # as the dialog readers read a header
            break
        yield from pending.flush()
        if names is None:
            raise ConversionError(path, 1, "the file is empty (no header)")
        n_fields = records.width = len(names)
        if callable(columns):
            try:
                columns = columns(names)
            except ValueError as err:
                raise ConversionError(path, first_line, str(err)) from None
        missing = []
        for role, column in columns.items():
            index = as_index(column)
            if isinstance(column, str) and column in names:
                where[role] = names.index(column)
            elif index is not None and index < len(names):
                where[role] = index
            else:
                missing.append(column)
        if missing:
            raise ConversionError(
                path,
                first_line,
                f"missing column(s) {missing}; found {names!r} (is the delimiter {delimiter!r} right?)",
            )
    else:
        if callable(columns):
            raise ValueError("Without a header, the columns must be given as 0-based indices.")
        for role, column in columns.items():
            index = as_index(column)
            if index is None:
                raise ValueError(
                    f"Without a header, columns are 0-based indices; got {role}={column!r}."
                )
            where[role] = index
    for line, _, _, row in records:
        yield from pending.flush()
        if n_fields is None:
            n_fields, first_line = len(row), line
            records.width = n_fields
            needed = max(where.values())
            if needed >= n_fields:
                raise ConversionError(
                    path,
                    line,
                    f"column index {needed} out of range: the first row has {n_fields} field(s) "
                    f"(is the delimiter {delimiter!r} right?)",
                )
        if len(row) != n_fields:
            origin = "" if header else f" (as line {first_line})"
            yield line, BadRow(f"expected {n_fields} fields{origin}, found {len(row)} ({ROW_HINT})")
            continue
        yield line, {role: row[i] for role, i in where.items()}
    yield from pending.flush()


Build = Callable[[int, Dict[str, str]], Optional[Doc]]


def convert_rows(
    path, rows: Iterable[Tuple[int, Row]], build: Build, report: ConversionReport, skip_bad: bool
) -> List[Doc]:
    """The row loop of every converter: read, check, build, report.

    Each row read counts in ``report.n_rows``. ``build(line, row)`` checks the
    row and returns its Doc, or None for a row left out on purpose (counted by
    the converter in its notes). A ``BadRow`` from the reader, or a ValueError
    raised by ``build``, is a bad row: a ConversionError naming the file and the
    line, raised, or with ``skip_bad`` kept in ``report.skipped``."""
    docs: List[Doc] = []
    for line, row in rows:
        report.n_rows += 1
        try:
            if isinstance(row, BadRow):
                raise ConversionError(path, line, row.reason)
            doc = build(line, row)
        except ValueError as err:  # ConversionError is a ValueError
            if not isinstance(err, ConversionError):
                err = ConversionError(path, line, str(err))
            report.bad(err, skip_bad)
            continue
        if doc is not None:
            docs.append(doc)
    return docs


# a conversion: vocab -> (Docs, report)
Convert = Callable[[Vocab], Tuple[List[Doc], ConversionReport]]
