"""Shared pieces of the converters: errors, bad-row bookkeeping, file reading,
and what every ``convert <format>`` sub-command shares (the arguments, the
shared options, writing the DocBin and the summary)."""
import csv
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import spacy
import typer
from spacy.tokens import Doc
from spacy.vocab import Vocab
from wasabi import msg

# A turn can be a whole monologue: lift the csv module's 128 KiB field limit
# (process-wide: csv has no per-reader setting; the dialog readers share it).
csv.field_size_limit(2**31 - 1)


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


# -- the command line: what every ``convert <format>`` sub-command shares ------

InputPath = Annotated[Path, typer.Argument(help="Input file", metavar="INPUT")]
OutputPath = Annotated[Path, typer.Argument(help="Output .spacy file", metavar="OUTPUT")]
SkipBad = Annotated[
    bool, typer.Option("--skip-bad", help="Leave bad rows out (counted) instead of stopping")
]
Lang = Annotated[
    str, typer.Option("--lang", help="Language of the blank pipeline used for tokenization")
]

Convert = Callable[[Vocab], Tuple[List[Doc], ConversionReport]]
MAX_SHOWN = 20


def print_report(report: ConversionReport, output_path: Path) -> None:
    """The summary of a conversion: counts, the converter's notes, the first
    skipped rows."""
    msg.good(f"Wrote {report.n_docs} Docs from {report.n_rows} rows to {output_path}")
    print_notes(report)


def print_notes(report: ConversionReport) -> None:
    """The converter's notes and the first skipped rows."""
    for note in report.notes:
        msg.info(note)
    if report.skipped:
        msg.warn(f"Skipped {len(report.skipped)} bad rows:")
        for err in report.skipped[:MAX_SHOWN]:
            print(f"  {err}")
        if len(report.skipped) > MAX_SHOWN:
            print(f"  ... and {len(report.skipped) - MAX_SHOWN} more")


def run_conversion(convert: Convert, input_path: Path, output_path: Path, lang: str) -> ConversionReport:
    """Run ``convert`` on the vocab of a blank ``lang`` pipeline, write its Docs
    to ``output_path`` (a DocBin keeping user data, written through a temporary
    file) and print the summary. A ``ConversionError``, an invalid option, an
    output path that is the input, or no pair converted exits with status 1."""
    from ..splits import check_outputs, write_docs

    vocab = spacy.blank(lang).vocab
    try:
        check_outputs([input_path], [output_path])
        docs, report = convert(vocab)
    except ConversionError as err:
        msg.fail(f"Conversion stopped: {err}", exits=1)
    except ValueError as err:
        msg.fail(f"Invalid option: {err}", exits=1)
    if not docs:
        print_notes(report)
        msg.fail(f"No pair converted from {input_path} ({report.n_rows} rows, {len(report.skipped)} skipped "
                 f"as bad): nothing written to {output_path}", exits=1)
    write_docs(docs, output_path)
    print_report(report, output_path)
    return report
