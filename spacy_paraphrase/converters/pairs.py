"""Any file of text pairs (CSV, TSV or JSON Lines) to pair Docs.

Input: one pair per row (or per JSON object), with two text columns, an
optional label column and an optional id column.

Options:

``text1``, ``text2``
    The columns of the first and second turn: header names, or 0-based column
    indices (needed with ``header=False``; also allowed with a header). For JSON
    Lines, the keys of the objects. Both or neither: by default the first of
    ``table_reader.PAIR_COLUMNS`` present (``sentence1`` / ``sentence2``,
    ``text1`` / ``text2``, MRPC's ``#1 String`` / ``#2 String``, in any case).
``label``
    The label column (name or index), or ``None`` for unlabelled data (then
    ``doc.cats`` is empty).
``id_column``
    The column with the pair's id; by default ``id`` when the file has it, else
    the id is ``{file stem}:{line}`` (the line where the row starts).

``delimiter``
    ``","``, ``"\\t"`` (also written ``"tab"`` or ``"\\\\t"``), ``"comma"``, any
    other single character, or ``"jsonl"``. By default from the file extension:
    ``.csv`` comma, ``.tsv`` / ``.txt`` / ``.tab`` tab, ``.jsonl`` / ``.ndjson``
    JSON Lines.
``header``
    Whether the first row names the columns (default True).
``quoting``
    ``"minimal"`` (default; CSV double quotes as written by Python's csv module
    or pandas) or ``"none"`` (quotes are ordinary characters: use it for files
    like MRPC's ``msr_paraphrase_train.txt`` whose strings contain bare ``"``).
``label_map``
    Optional dict raw value -> label name; raw values not in it are bad rows.
    Without it the raw values (stripped) are the label names, except that a
    column holding only ``0`` / ``1`` is read as ``NOT_PARAPHRASE`` /
    ``IS_PARAPHRASE``.

The defaults of the text columns, the id column and the ids, the reading of
a header (names stripped) and of an id (kept as given; an empty one is a bad
row) are the ``pairs`` dialog format's (``dialogs/tables.py``, ``annotate``),
so a pair has the same id in a converted DocBin and in an annotate record.
One difference: a repeated id is kept here (MRPC's ``#1 ID`` repeats) and a
bad row for ``annotate``, whose records are joined by it.

``doc.cats`` holds every label of the label set (one-hot), so the label set is
visible from any Doc. Leading and trailing whitespace of the texts is removed; a
row with an empty or whitespace-only text is a bad row.

MRPC (``Quality  #1 ID  #2 ID  #1 String  #2 String``, tab-separated, bare quotes)::

    convert_pairs("msr_paraphrase_train.txt", vocab, text1="#1 String",
                  text2="#2 String", label="Quality", id_column="#1 ID",
                  quoting="none")

MultiPIT and ARPA are presets of this converter (``PairPreset``,
``convert_preset``). This module also holds the helpers the other
pair-classification converter (``circa``) shares.
"""
import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import spacy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.vocab import Vocab

from ..dialogs.fields import as_id
from ..pair_doc import PairDocError, make_pair_doc
from ..table_reader import (
    PAIR_ID_COLUMN,
    find_pair_columns,
    json_lines,
    made_pair_id,
    no_pair_columns,
    quoting_mode,
    resolve_delimiter,
)
from .common import (
    BadRow,
    Column,
    ConversionError,
    ConversionReport,
    Row,
    PendingRows,
    convert_rows,
    open_file,
    read_table,
)

IS_PARAPHRASE = "IS_PARAPHRASE"
NOT_PARAPHRASE = "NOT_PARAPHRASE"
NEAR_PARAPHRASE = "NEAR_PARAPHRASE"
BINARY_LABELS = (IS_PARAPHRASE, NOT_PARAPHRASE)
BINARY_VALUES = {"1": IS_PARAPHRASE, "0": NOT_PARAPHRASE}

# -- helpers shared by the pair-classification converters --------------------


def blank_nlp(vocab: Vocab, lang: str) -> Language:
    """A blank pipeline of ``lang`` sharing ``vocab``: the tokenizer for string turns."""
    if vocab.lang and vocab.lang != lang:
        raise ValueError(
            f"lang={lang!r} but the vocab is for {vocab.lang!r}; pass lang={vocab.lang!r} "
            "(the tokenizer must share the vocab)."
        )
    return spacy.blank(lang, vocab=vocab)


def one_hot(labels: Sequence[str], label: str) -> Dict[str, float]:
    """``doc.cats`` for a hard label: every label of the set, 1.0 for ``label``."""
    return {name: float(name == label) for name in labels}


def distribution(labels: Sequence[str], votes: Sequence[str]) -> Dict[str, float]:
    """``doc.cats`` for a soft label: the share of ``votes`` for each label."""
    n = len(votes)
    return {name: sum(1 for v in votes if v == name) / n for name in labels}


def build_pair(
    nlp: Language,
    path,
    line: int,
    first: str,
    second: str,
    columns: Tuple[str, str],
    *,
    speakers: Optional[Tuple[str, str]] = None,
    pair_id: Optional[str] = None,
) -> Doc:
    """make_pair_doc on stripped texts; PairDocError (e.g. an empty text)
    becomes a ConversionError naming the row and the columns."""
    try:
        return make_pair_doc(nlp, first.strip(), second.strip(), speakers=speakers, pair_id=pair_id)
    except PairDocError as err:
        raise ConversionError(
            path, line, f"cannot build a pair from columns {columns[0]!r} and {columns[1]!r}: {err}"
        ) from None


def check_text(value: str, column: str) -> None:
    """Raise ValueError for an empty or whitespace-only text (checked before
    tokenizing, so every bad row is found in file order)."""
    if not value.strip():
        raise ValueError(f"empty or whitespace-only text in column {column!r}")


# -- reading ------------------------------------------------------------------


def _json_value(value) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float, str)):
        return str(value)
    raise ValueError(f"expected a string or a number, got {type(value).__name__}: {value!r}"[:120])


def with_defaults(columns: Dict[str, Optional[Column]], names: Sequence[str]) -> Dict[str, Column]:
    """``columns`` (roles text1, text2, optionally label and id) completed
    from a header's or a JSON object's ``names`` with the pair-file defaults:
    text columns None -> ``find_pair_columns``, no id -> ``id`` when present.
    ValueError when no text columns are found."""
    out = dict(columns)
    if out["text1"] is None:
        found = find_pair_columns(list(names))
        if found is None:
            raise ValueError(f"{no_pair_columns(names)}: pass text1 and text2")
        out["text1"], out["text2"] = found
    if "id" not in out and PAIR_ID_COLUMN in names:
        out["id"] = PAIR_ID_COLUMN
    return out  # type: ignore[return-value]


def _jsonl_rows(path: Path, columns: Dict[str, Optional[Column]], names: Dict[str, str]) -> Iterator[Tuple[int, Row]]:
    """Each object's ``{role: value}`` (the id as given, ``as_id``), its
    columns completed by ``with_defaults`` as ``dialogs.tables.read_pair_file``
    completes them: text columns found once, in the first object that has
    them, an ``id`` key looked for in each (the names kept in ``names`` for
    the messages)."""
    for role, column in columns.items():
        if column is not None and not isinstance(column, str):
            raise ValueError(f"For JSON Lines, {role} must be a key name, got {column!r}.")
    pending = PendingRows()
    for line, _, _, obj in json_lines(open_file(path), pending):
        yield from pending.flush()
        if not isinstance(obj, dict):
            yield line, BadRow(f"expected a JSON object, got {type(obj).__name__}")
            continue
        try:
            found = with_defaults(columns, list(obj))
        except ValueError as err:
            yield line, BadRow(str(err))
            continue
        if columns["text1"] is None:
            columns = dict(columns, text1=found["text1"], text2=found["text2"])
        missing = [c for c in found.values() if c not in obj]
        if missing:
            yield line, BadRow(f"missing key(s) {missing}; found {list(obj)!r}")
            continue
        names.update({role: str(c) for role, c in found.items()})
        try:
            yield line, {role: as_id(obj[c], str(c)) if role == "id" else _json_value(obj[c])  # type: ignore
                         for role, c in found.items()}
        except ValueError as err:
            yield line, BadRow(str(err))
    yield from pending.flush()


# -- the converter ------------------------------------------------------------


@dataclass(frozen=True)
class PairPreset:
    """A dataset whose file is a plain pair file: the pair-file converter with
    its columns, delimiter and labels fixed (``convert_preset``)."""

    text1: str
    text2: str
    label: str
    delimiter: str
    label_map: Dict[str, str]
    """Raw value -> label; the label set is its values, in this order."""
    label_error: str
    """A bad row's reason for a raw value not in ``label_map`` (``{raw!r}`` is
    the value)."""
    keep_raw: bool = False
    """Keep the raw value in ``doc.spans["turns"].attrs["raw"]``."""
    notes: Tuple[str, ...] = ()
    """The report's notes (instead of the label set)."""


def convert_pairs(
    path,
    vocab: Vocab,
    *,
    text1: Optional[Column] = None,
    text2: Optional[Column] = None,
    label: Optional[Column] = "label",
    id_column: Optional[Column] = None,
    delimiter: Optional[str] = None,
    header: bool = True,
    quoting: str = "minimal",
    label_map: Optional[Dict] = None,
    skip_bad: bool = False,
    lang: str = "en",
) -> Tuple[List[Doc], ConversionReport]:
    """Convert a CSV / TSV / JSON Lines file of text pairs into pair Docs (see module doc)."""
    path = Path(path)
    if (text1 is None) != (text2 is None):
        raise ValueError(f"text1 and text2 name the two text columns together; got only "
                         f"{'text1' if text1 is not None else 'text2'}={text1 if text1 is not None else text2!r}")
    quote = quoting_mode(quoting)
    fmt = resolve_delimiter(path, delimiter)
    columns: Dict[str, Optional[Column]] = {"text1": text1, "text2": text2}
    if label is not None:
        columns["label"] = label
    if id_column is not None:
        columns["id"] = id_column
    mapping = None
    if label_map is not None:
        if label is None:
            raise ValueError("label_map given but label=None (unlabelled data).")
        mapping = {str(k).strip(): str(v) for k, v in label_map.items()}
    return _convert(path, vocab, fmt, quote, header, columns, mapping, skip_bad=skip_bad, lang=lang)


def convert_preset(
    preset: PairPreset, path, vocab: Vocab, *, skip_bad: bool = False, lang: str = "en"
) -> Tuple[List[Doc], ConversionReport]:
    """Convert a file of a ``PairPreset`` dataset (e.g. MultiPIT, ARPA) into pair Docs."""
    columns: Dict[str, Optional[Column]] = {"text1": preset.text1, "text2": preset.text2, "label": preset.label}
    return _convert(
        Path(path), vocab, preset.delimiter, csv.QUOTE_MINIMAL, True, columns, dict(preset.label_map),
        skip_bad=skip_bad, lang=lang, preset=preset,
    )


def _convert(
    path: Path,
    vocab: Vocab,
    fmt: str,
    quoting: int,
    header: bool,
    columns: Dict[str, Optional[Column]],
    mapping: Optional[Dict[str, str]],
    *,
    skip_bad: bool,
    lang: str,
    preset: Optional[PairPreset] = None,
) -> Tuple[List[Doc], ConversionReport]:
    """The pair-file converter on resolved options: columns maps the roles
    text1, text2 and optionally label and id to names or indices (text
    columns None: found, ``with_defaults``)."""
    names = {role: str(c) for role, c in columns.items()}  # as found, for the messages
    labelled = "label" in columns
    nlp = blank_nlp(vocab, lang)
    report = ConversionReport()
    if fmt == "jsonl":
        rows: Iterable = _jsonl_rows(path, columns, names)
    elif header:
        def found(header_names: List[str]) -> Dict[str, Column]:
            try:
                complete = with_defaults(columns, header_names)
            except ValueError as err:
                raise ValueError(f"{err} (is the delimiter {fmt!r} right?)") from None
            names.update({role: str(c) for role, c in complete.items()})
            return complete

        rows = read_table(path, fmt, found, header=True, quoting=quoting)
    elif columns["text1"] is None:
        raise ValueError("Without a header, text1 and text2 must be given as 0-based indices.")
    else:
        rows = read_table(path, fmt, columns, header=False, quoting=quoting)  # type: ignore[arg-type]
    raw_labels: List[Optional[str]] = []

    def build(line: int, row: Dict[str, str]) -> Doc:
        check_text(row["text1"], names["text1"])
        check_text(row["text2"], names["text2"])
        raw = None
        if labelled:
            raw = row["label"].strip()
            if preset is not None:
                if raw not in mapping:  # type: ignore[operator]
                    raise ValueError(preset.label_error.format(raw=raw))
            elif not raw:
                raise ValueError(f"empty label in column {names['label']!r}")
            elif mapping is not None and raw not in mapping:
                raise ValueError(f"label {raw!r} is not in label_map (keys: {sorted(mapping)})")
        pair_id = as_id(row["id"], names["id"]) if "id" in row else made_pair_id(path, line)
        doc = build_pair(
            nlp, path, line, row["text1"], row["text2"], (names["text1"], names["text2"]), pair_id=pair_id
        )
        if preset is not None and preset.keep_raw:
            doc.spans["turns"].attrs["raw"] = raw
        raw_labels.append(raw)
        return doc

    docs = convert_rows(path, rows, build, report, skip_bad)
    if labelled:
        if mapping is not None:
            labels = list(dict.fromkeys(mapping.values()))
        elif set(raw_labels) <= set(BINARY_VALUES):
            mapping = dict(BINARY_VALUES)
            labels = list(BINARY_LABELS)
            report.notes.append(
                f"Label column {names['label']!r} holds 0/1: 1 -> {IS_PARAPHRASE}, 0 -> {NOT_PARAPHRASE}."
            )
        else:
            labels = sorted(set(raw_labels))  # type: ignore[arg-type]
        for doc, raw in zip(docs, raw_labels):
            doc.cats = one_hot(labels, mapping[raw] if mapping is not None else raw)  # type: ignore
        if preset is None:
            report.notes.append(f"Label set ({len(labels)}): {labels}.")
    else:
        report.notes.append("Unlabelled: doc.cats is empty.")
    if preset is not None:
        report.notes.extend(preset.notes)
    report.n_docs = len(docs)
    return docs, report
