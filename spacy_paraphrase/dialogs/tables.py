"""Tabular dialog files: a flat table of utterances (``turns``) and ready-made
pair files (``pairs``), as CSV, TSV or JSON Lines. See docs/dialog-formats.md."""
from array import array
from bisect import bisect_left
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence

from .turns import (
    Conversation,
    DialogFormatError,
    OnProblem,
    Problem,
    Turn,
    TurnPair,
    Utterance,
    reporter,
)
from ..table_reader import (
    PAIR_COLUMNS,
    PAIR_ID_COLUMN,
    InputRowError,
    find_pair_columns,
    made_pair_id,
    made_pair_line,
    no_pair_columns,
    read_csv_at,
    read_json_at,
)
from .fields import IdTypes, as_id, as_object, as_order, as_speaker, as_text, field
from .streaming import Stream, iter_csv_records, iter_json_lines, read_grouped, table_format

REPLY_TO_COLUMNS = ("reply_to", "reply-to")


@contextmanager
def _closed_on_error(records):
    """Close ``records`` (the open input) when a check made inside fails."""
    try:
        yield
    except BaseException:
        records.close()
        raise


def _records(path: Path, fmt: str, quoting: int, report: OnProblem):
    """(header line, header names, records after it) of a table; for JSON
    Lines (no header) (None, None, records). DialogFormatError for a CSV/TSV
    file without header or with a column named twice."""
    if fmt == "jsonl":
        return None, None, iter_json_lines(path, report)
    records = iter_csv_records(path, fmt, quoting, report)
    with _closed_on_error(records):
        try:
            line, _, _, names = next(records)
        except StopIteration:
            raise DialogFormatError(f"{path}: the file is empty (no header)") from None
        names = [name.strip() for name in names]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise DialogFormatError(
                f"{path}, line {line}: the header names column(s) {repeated} more than once; "
                "rename them so that each column has its own name"
            )
    records.width = len(names)
    return line, names, records


def _missing(path: Path, line: int, needed: Sequence[str], names: Sequence[str], delimiter: str):
    missing = [name for name in needed if name not in names]
    if missing:
        raise DialogFormatError(
            f"{path}, line {line}: missing column(s) {missing}; found {list(names)!r} "
            f"(is the delimiter {delimiter!r} right?)"
        )


def _row(record: Any, names: Optional[List[str]]) -> Dict[str, Any]:
    """A record as {column: value}: a JSON object, or a CSV/TSV row read by the header ``names``."""
    if names is None:
        return as_object(record)
    if len(record) != len(names):
        raise InputRowError(f"expected {len(names)} fields (as the header), found {len(record)}")
    return dict(zip(names, record))


def read_turn_table(
    path,
    *,
    conversation_column: str = "conversation_id",
    speaker_column: str = "speaker",
    text_column: str = "text",
    id_column: Optional[str] = None,
    order_column: Optional[str] = None,
    reply_to_column: Optional[str] = None,
    delimiter: Optional[str] = None,
    quoting: str = "minimal",
    on_problem: Optional[OnProblem] = None,
) -> Iterator[Conversation]:
    """Conversations of a table with one utterance per row (CSV, TSV or JSON
    Lines), rows of a conversation in any order and interleaved with others.

    ``id_column`` defaults to ``id`` when present, else utterance ids are
    ``{conversation}-{i}`` (i = 0-based position in the conversation);
    ``order_column`` (numeric, ties kept in file order) defaults to file
    order; ``reply_to_column`` defaults to ``reply_to`` / ``reply-to`` when
    present. The other columns go to the utterance's ``meta``."""
    path = Path(path)
    report = reporter(on_problem)
    fmt, quote = table_format(path, delimiter, quoting)
    line, names, records = _records(path, fmt, quote, report)
    if names is not None:
        optional = [name for name in (order_column, id_column, reply_to_column) if name]
        with _closed_on_error(records):
            _missing(path, line, [conversation_column, speaker_column, text_column, *optional], names, fmt)

    def read_at(fh, start, end):
        return read_json_at(fh, start, end) if names is None else read_csv_at(fh, start, end, fmt, quote)

    id_types = IdTypes(conversation_column)

    def parse(record, line):
        row = _row(record, names)
        raw_conversation_id = field(row, conversation_column)
        conversation_id = as_id(raw_conversation_id, conversation_column)
        speaker = as_speaker(field(row, speaker_column), speaker_column)
        text = as_text(field(row, text_column), text_column)
        order = as_order(field(row, order_column), order_column) if order_column else 0.0
        id_name = id_column or ("id" if "id" in row else None)
        utt_id = as_id(field(row, id_name), id_name) if id_name else None
        reply_name = reply_to_column or next((c for c in REPLY_TO_COLUMNS if c in row), None)
        value = field(row, reply_name) if reply_name else None
        reply_to = None if value in (None, "") else as_id(value, reply_name)
        used = {conversation_column, speaker_column, text_column, order_column, id_name, reply_name}
        meta = {key: value for key, value in row.items() if key not in used}
        id_types.check(raw_conversation_id, conversation_id)

        def make(position: int) -> Utterance:
            return Utterance(utt_id if utt_id is not None else f"{conversation_id}-{position}", conversation_id,
                             speaker, text, reply_to=reply_to, meta=meta, path=str(path), line=line)

        return conversation_id, order, make

    # returned, not yielded from: the header is checked when called, not when first read
    return Stream(read_grouped(path, records, read_at, parse, report), records)


def read_pair_file(
    path,
    *,
    text1: Optional[str] = None,
    text2: Optional[str] = None,
    id_column: Optional[str] = None,
    delimiter: Optional[str] = None,
    quoting: str = "minimal",
    on_problem: Optional[OnProblem] = None,
) -> Iterator[TurnPair]:
    """Ready-made pairs, one per row of a CSV / TSV / JSON Lines file.

    ``text1`` / ``text2`` (both or neither) default to the first of
    ``table_reader.PAIR_COLUMNS`` present (e.g. ``sentence1`` / ``sentence2``).
    The pair id is the ``id_column`` value (``id_column`` defaults to ``id``
    when the file has that column), else ``{file stem}:{line}``: the defaults
    of ``convert pairs`` too (``table_reader``). The utterance ids are ``{pair id}-0`` and
    ``{pair id}-1``; speakers are None; the other columns go to ``meta``.
    Texts are kept verbatim (an empty text is not dropped)."""
    path = Path(path)
    if bool(text1) != bool(text2):
        raise DialogFormatError(
            f"{path}: text1 and text2 name the two text columns together; got only "
            f"{'text1' if text1 else 'text2'}={text1 or text2!r}"
        )
    report = reporter(on_problem)
    fmt, quote = table_format(path, delimiter, quoting)
    line, names, records = _records(path, fmt, quote, report)
    columns = (text1, text2) if text1 and text2 else None
    if names is not None:
        with _closed_on_error(records):
            columns = columns or find_pair_columns(names)
            if columns is None:
                raise DialogFormatError(f"{path}: {no_pair_columns(names)}: pass text1 and text2")
            _missing(path, line, list(columns) + ([id_column] if id_column else []), names, fmt)
    # a generator of its own: the header is checked when called, not when first read
    return Stream(_pair_rows(path, names, columns, id_column, records, report), records)


class PairIds:
    """The pair ids a pair file has used so far, to refuse a repeated one.
    This must grow with the file: an id given in the file is kept as it is
    (a string in a set, about 100 bytes per pair); an id made from the line
    (``table_reader.made_pair_id``, unique by construction) costs only its
    line number, 8 bytes in an array (docs/annotate.md, "Speed and memory")."""

    def __init__(self, path: Path):
        self.path = path
        self.given: set = set()
        self.made_lines = array("q")  # ascending: lines are read in order

    def __contains__(self, pair_id: str) -> bool:
        if pair_id in self.given:
            return True
        line = made_pair_line(self.path, pair_id)
        if line is None:
            return False
        i = bisect_left(self.made_lines, line)
        return i < len(self.made_lines) and self.made_lines[i] == line

    def add(self, pair_id: str, made_at: Optional[int] = None) -> None:
        """Keep ``pair_id``; ``made_at``: the line it was made from."""
        if made_at is None:
            self.given.add(pair_id)
        else:
            self.made_lines.append(made_at)


def _pair_rows(path: Path, names: Optional[List[str]], columns, id_column: Optional[str], records,
               report: OnProblem) -> Iterator[TurnPair]:
    seen = PairIds(path)
    for line, _, _, record in records:
        try:
            row = _row(record, names)
            columns = columns or find_pair_columns(list(row))  # a CSV/TSV file's: from its header
            if columns is None:
                raise InputRowError(f"no pair text fields (looked for {[list(c) for c in PAIR_COLUMNS]})")
            first, second = (as_text(field(row, column), column) for column in columns)
            id_name = id_column or (PAIR_ID_COLUMN if PAIR_ID_COLUMN in row else None)
            pair_id = as_id(field(row, id_name), id_name) if id_name else made_pair_id(path, line)
            if pair_id in seen:
                raise InputRowError(f"pair id {pair_id!r} repeated")
        except InputRowError as err:
            report(Problem(str(path), line, str(err)))
            continue
        seen.add(pair_id, None if id_name else line)
        meta = {key: value for key, value in row.items() if key not in (*columns, id_name)}
        turns = [Turn.of([Utterance(f"{pair_id}-{i}", pair_id, None, text, path=str(path), line=line)])
                 for i, text in enumerate((first, second))]
        yield TurnPair(pair_id, pair_id, *turns, meta=meta)
