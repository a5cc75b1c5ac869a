"""Reading dialog files in two passes, shared by the dialog readers, and
the first record of a file, which format guessing reads (``read_first_record``).

The records themselves are read by ``spacy_paraphrase/table_reader.py`` (the
package's one reader of CSV, TSV and JSON Lines files), here with the dialog
readers' errors: a file that cannot be opened is a ``DialogFormatError``, a
malformed record a ``Problem``. ``read_grouped`` indexes a file in a first pass
and seeks back to the records of one conversation in a second pass: memory then
holds a few numbers per utterance, never the texts of other conversations.
``Stream`` is what a table's reader returns, its header checked and its file
open: closing it closes the file, read or not.
"""
from array import array
from contextlib import closing
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from .. import table_reader
from ..table_reader import CsvRecords, OnBad, InputRowError
from .turns import Conversation, DialogFormatError, OnProblem, Problem, Utterance


def table_format(path: Path, delimiter: Optional[str], quoting: str = "minimal") -> Tuple[str, int]:
    """(``table_reader.resolve_delimiter``, ``table_reader.quoting_mode``),
    failing with a DialogFormatError."""
    try:
        fmt = table_reader.resolve_delimiter(path, delimiter)
    except ValueError as err:
        raise DialogFormatError(f"{path}: {err}") from None
    try:
        return fmt, table_reader.quoting_mode(quoting)
    except ValueError as err:
        raise DialogFormatError(str(err)) from None


def check_file(path: Path) -> None:
    """DialogFormatError when ``path`` is not a regular file (``table_reader.file_problem``)."""
    problem = table_reader.file_problem(path)
    if problem is not None:
        raise DialogFormatError(f"{path}: {problem}")


def open_binary(path: Path):
    check_file(path)
    return open(path, "rb")


class Stream:
    """The items of a reader whose input is open before its first item (a
    table whose header is checked when the reader is called, a ``DialogCorpus``):
    ``close`` closes ``source`` too, which closing a generator not started
    yet would not do."""

    def __init__(self, items: Iterator[Any], source) -> None:
        self._items, self._source = items, source

    def __iter__(self) -> "Stream":
        return self

    def __next__(self) -> Any:
        return next(self._items)

    def close(self) -> None:
        try:
            self._items.close()
        finally:
            self._source.close()


def problems_to(path: Path, report: OnProblem) -> OnBad:
    """The table reader's ``on_bad`` that hands each malformed record of ``path`` to ``report``."""
    return lambda line, reason: report(Problem(str(path), line, reason))


def iter_json_lines(path: Path, report: OnProblem) -> Iterator[Tuple[int, int, int, Any]]:
    """(line, start byte, end byte, value) of each non-blank line of a JSON
    Lines file; an unreadable line is reported and skipped."""
    yield from table_reader.json_lines(open_binary(path), problems_to(path, report))


def iter_csv_records(path: Path, delimiter: str, quoting: int, report: OnProblem) -> CsvRecords:
    """The records of a CSV/TSV file (``table_reader.CsvRecords``), malformed ones reported."""
    return CsvRecords(open_binary(path), delimiter, quoting, problems_to(path, report))


def read_first_record(path: Path) -> Tuple[str, Any]:
    """(``"jsonl"`` or the delimiter, first JSON object or header row) of a
    table file, for format guessing (one open of the file, closed on
    return); DialogFormatError if unreadable."""
    fmt, quote = table_format(path, None)

    def fail(problem: Problem) -> None:
        raise DialogFormatError(str(problem))

    records = iter_json_lines(path, fail) if fmt == "jsonl" else iter_csv_records(path, fmt, quote, fail)
    with closing(records):
        for _, _, _, first in records:
            return fmt, (first if fmt == "jsonl" else [name.strip() for name in first])
    raise DialogFormatError(f"{path}: the file is empty")


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
    InputRowError for a malformed record; a repeated utterance id within a
    conversation is reported and the later record left out."""
    bad = problems_to(path, report)
    index = GroupIndex()
    for line, start, end, record in records:
        try:
            conversation_id, order, _ = parse(record, line)
        except InputRowError as err:
            bad(line, str(err))
            continue
        index.add(conversation_id, line, start, end, order)
    with open_binary(path) as fh:
        for conversation_id, positions in index:
            utterances: List[Utterance] = []
            seen = set()
            for line, start, end in positions:
                try:
                    _, _, make = parse(read_at(fh, start, end), line)
                except InputRowError as err:  # the file changed between the passes
                    bad(line, f"{err} (did the file change while reading?)")
                    continue
                utterance = make(len(utterances))
                if utterance.id in seen:
                    bad(line, f"utterance id {utterance.id!r} repeated in conversation {conversation_id!r}")
                    continue
                seen.add(utterance.id)
                utterances.append(utterance)
            if utterances:
                yield Conversation(conversation_id, utterances, path=str(path), line=positions[0][0])
