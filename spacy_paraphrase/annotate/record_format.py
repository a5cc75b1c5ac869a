"""The record codec: a ``TurnPair`` as plain JSON on its way from a dialog
reader to the model (a *row*), the annotate record a processed pair Doc
becomes (docs/annotate.md, "The record"), the record files annotate writes,
and the way back from a row or a record to a ``TurnPair``. The one file that
knows the shape of both; the local engine, the Ray engine, ConvoKit output,
``visualize`` and ``report`` all go through it.

- ``pair_row(pair)``: a row = ``pair_id``, ``conversation_id``, ``first`` /
  ``second`` = ``{"speaker", "utterance_ids", "text", "offsets"}``
  (``offsets[i]`` = ``[start, end]`` of utterance ``i`` inside the turn text)
  and ``meta`` when the pair has any.
- ``make_record(doc, row)``: the row's ids, turns (offsets kept) and meta,
  plus the pair score, decision, spans (character offsets into each
  utterance's own text; a span crossing an utterance boundary becomes one
  span per utterance, each trimmed of whitespace at its edges) and, with
  ``with_probs``, one probability per whitespace word of each turn.
- ``row_pair(row_or_record)``: the ``TurnPair`` back, utterance texts cut
  from the turn texts at the kept offsets (a one-utterance turn may omit
  them: the whole text).
- ``dumps`` writes a record (or an errors-file entry) as one JSON line;
  ``output_files`` / ``read_records`` read every kind of annotate output.
  On the Ray engine a row travels as its JSON text (``staging.py``).
"""
import json
import math
import re
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import numpy
from spacy.tokens import Doc

from ..dialogs.turns import Turn, TurnPair, Utterance
from ..pair_doc import get_turns, turn_text_problem
from ..words import word_bounds, word_values

SIDES = ("first", "second")
# The records and errors files of a ConvoKit output (``--output-format convokit``),
# each name after the run's meta prefix (``sp_`` by default).
CONVOKIT_RECORDS = "annotate.records.jsonl"
CONVOKIT_ERRORS = "annotate.errors.jsonl"


class RecordsError(ValueError):
    """Records that cannot be read, or (``report``) read together: one line,
    naming the file and line."""
_WORD = re.compile(r"\S+")


def _turn_row(turn: Turn) -> Dict[str, Any]:
    row = turn.as_dict()
    row["offsets"] = [[start, end] for start, end in turn.offsets]
    return row


def pair_row(pair: TurnPair) -> Dict[str, Any]:
    """The JSON-able row of a turn pair (module doc)."""
    row: Dict[str, Any] = {
        "pair_id": pair.pair_id,
        "conversation_id": pair.conversation_id,
        "first": _turn_row(pair.first),
        "second": _turn_row(pair.second),
    }
    if pair.meta:
        row["meta"] = dict(pair.meta)
    return row


def invalid_side(row: Mapping[str, Any], max_length: Optional[int] = None) -> Optional[Tuple[str, str]]:
    """``(side, reason)`` for the first turn of the row that cannot be
    annotated (``pair_doc.turn_text_problem``; ``max_length``: the pipeline's
    ``nlp.max_length``), or None."""
    for side in SIDES:
        turn = row.get(side)
        if not isinstance(turn, Mapping):
            return side, f"the {side} turn is missing"
        problem = turn_text_problem(turn.get("text"), side, max_length)
        if problem is not None:
            return side, problem
    return None


def invalid_reason(row: Mapping[str, Any], max_length: Optional[int] = None) -> Optional[str]:
    """Why this row's pair cannot be annotated (``invalid_side``), or None."""
    found = invalid_side(row, max_length)
    return None if found is None else found[1]


def turn_speakers(row: Mapping[str, Any]) -> Optional[Tuple[str, str]]:
    """``speakers=`` for ``make_pair_doc``: both speaker names, or None when
    either is unknown, empty or not valid Unicode, e.g. holds a lone surrogate
    (the turns are then labelled FIRST / SECOND; the record keeps the names)."""
    names = tuple(row[side].get("speaker") for side in SIDES)
    if all(_encodable(name) for name in names):
        return names  # type: ignore
    return None


def _encodable(name: Any) -> bool:
    try:
        return isinstance(name, str) and bool(name) and bool(name.encode("utf-8"))
    except UnicodeEncodeError:
        return False


def _number(value: Any) -> Optional[float]:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def row_turn(turn: Mapping[str, Any], conversation_id: str = "") -> Turn:
    """The ``Turn`` of a row's or a record's side: utterance texts cut from
    the turn text at ``offsets`` (absent for a one-utterance turn: the whole
    text), so that ``Turn.split_span`` maps spans to utterances. ValueError
    for offsets that do not fit the text or the utterance ids."""
    text = turn.get("text")
    ids = turn.get("utterance_ids")
    if not isinstance(text, str) or not isinstance(ids, list) or not ids:
        raise ValueError("a turn needs a 'text' string and a non-empty 'utterance_ids' list")
    given = turn.get("offsets")
    if given is None and len(ids) == 1:
        given = [[0, len(text)]]
    if not isinstance(given, list) or len(given) != len(ids):
        n = len(given) if isinstance(given, list) else "no"
        raise ValueError(f"a turn has {len(ids)} utterance ids but {n} offsets (an annotate record keeps "
                         "the offsets of a merged turn's utterances)")
    offsets = []
    end = 0
    for pair in given:
        if (not isinstance(pair, (list, tuple)) or len(pair) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in pair)
                or not end <= pair[0] <= pair[1] <= len(text)):
            raise ValueError(f"offsets {given!r} are not ordered [start, end] ranges of the turn's "
                             f"{len(text)} characters")
        offsets.append((pair[0], pair[1]))
        end = pair[1]
    speaker = turn.get("speaker")
    utterances = tuple(
        Utterance(str(utt_id), conversation_id, speaker, text[start:end])
        for utt_id, (start, end) in zip(ids, offsets)
    )
    return Turn(speaker, text, utterances, tuple(offsets))


def row_pair(row: Mapping[str, Any]) -> TurnPair:
    """The ``TurnPair`` of a row or a record (``pair_row``'s inverse; a
    record's results are left out). ValueError for a malformed one."""
    conversation_id = "" if row.get("conversation_id") is None else str(row["conversation_id"])
    turns = []
    for side in SIDES:
        if not isinstance(row.get(side), Mapping):
            raise ValueError(f"{side!r} must be an object")
        try:
            turns.append(row_turn(row[side], conversation_id))
        except ValueError as err:
            raise ValueError(f"the {side} turn: {err}") from None
    if row.get("pair_id") is None:
        raise ValueError("'pair_id' is missing")
    return TurnPair(str(row["pair_id"]), conversation_id, turns[0], turns[1], dict(row.get("meta") or {}))


def _turn_base(doc: Doc, span, text: str, side: str) -> int:
    """Where the turn's text starts in the Doc's text, checked at the turn's
    first and last tokens (``doc.text`` itself costs a pass over all tokens)."""
    base = span.start_char
    first, last = doc[span.start], doc[span.end - 1]
    end = last.idx - base + len(last.text)
    if not text.startswith(first.text) or end > len(text) or text[last.idx - base : end] != last.text:
        raise ValueError(
            f"The pair Doc's {side} turn does not hold the row's {side} text: the Doc "
            "was not built from this row by make_pair_doc."
        )
    return base


def _spans(doc: Doc, group, turns, bases, sides_of) -> List[Dict[str, Any]]:
    scores = list(group.attrs.get("scores") or [None] * len(group))
    out = []
    for span, score in zip(group, scores):
        side = sides_of(span.start)
        i = SIDES.index(side)
        start, end = span.start_char - bases[i], span.end_char - bases[i]
        for piece in turns[i].split_span(start, end):
            # a run may go on over whitespace tokens into the next utterance:
            # each piece is trimmed of whitespace at its edges (none is left empty)
            lead = len(piece.text) - len(piece.text.lstrip())
            text = piece.text.strip()
            if not text:
                continue
            piece = piece._replace(start=piece.start + lead, end=piece.start + lead + len(text), text=text)
            out.append({
                "side": side,
                "label": span.label_,
                "utterance_id": piece.utterance_id,
                "start": piece.start,
                "end": piece.end,
                "text": piece.text,
                "score": _number(score),
            })
    return out


def model_words(doc: Doc, probs: numpy.ndarray) -> List[Tuple[int, int, float]]:
    """``(char start, char end, probability)`` of every word the model scores
    (``words.word_bounds`` / ``word_values``); whitespace tokens, words of
    their own there, never overlap a whitespace word of the text."""
    out = []
    bounds = word_bounds(doc)
    for (start, end), value in zip(bounds, word_values(doc, probs, bounds)):
        first, last = doc[start], doc[end - 1]
        out.append((first.idx, last.idx + len(last.text), float(value)))
    return out


def _words(scored: List[Tuple[int, int, float]], turn: Turn, base: int) -> List[Dict[str, Any]]:
    """One entry per whitespace word of the turn text: its utterance, offsets
    into that utterance's text and the largest probability of the model's
    words that overlap it (normally exactly one)."""
    j = 0
    out = []
    for match in _WORD.finditer(turn.text):
        lo, hi = base + match.start(), base + match.end()
        while j < len(scored) and scored[j][1] <= lo:
            j += 1
        k, best = j, math.nan
        while k < len(scored) and scored[k][0] < hi:
            if not math.isnan(scored[k][2]):
                best = scored[k][2] if math.isnan(best) else max(best, scored[k][2])
            k += 1
        piece = turn.split_span(match.start(), match.end())[0]
        out.append({
            "utterance_id": piece.utterance_id,
            "start": piece.start,
            "end": piece.end,
            "text": piece.text,
            "prob": _number(best),
        })
    return out


def make_record(
    doc: Doc,
    row: Mapping[str, Any],
    *,
    with_probs: bool,
    spans_key: str = "paraphrase",
    cats_key: str = "PARAPHRASE",
    threshold: float = 0.5,
) -> Dict[str, Any]:
    """The annotate record of a processed pair Doc built from ``row`` (module
    doc). ``threshold`` is the pipeline's pair threshold (``is_paraphrase`` =
    score >= threshold; ``PairAnnotator`` passes its component's)."""
    if spans_key not in doc.spans or "pair_score" not in doc.spans[spans_key].attrs:
        raise ValueError(
            f"doc.spans[{spans_key!r}] has no pair score: run a paraphrase_spans component "
            "with this spans_key on the Doc first."
        )
    group = doc.spans[spans_key]
    pair = row_pair(row)
    turns = [pair.first, pair.second]
    doc_turns = get_turns(doc)
    bases = [_turn_base(doc, span, turn.text, side) for span, turn, side in zip(doc_turns, turns, SIDES)]
    score = _number(doc.cats.get(cats_key, group.attrs["pair_score"]))
    record: Dict[str, Any] = {"pair_id": row["pair_id"], "conversation_id": row.get("conversation_id")}
    for side, turn in zip(SIDES, turns):
        record[side] = {key: row[side].get(key) for key in ("speaker", "utterance_ids", "text")}
        record[side]["offsets"] = [list(bounds) for bounds in turn.offsets]
    if row.get("meta"):
        record["meta"] = row["meta"]
    record["score"] = score
    record["is_paraphrase"] = score is not None and score >= threshold
    record["vote_share"] = _number(group.attrs.get("vote_share", score))
    record["agreement"] = _number(group.attrs.get("agreement"))
    record["margin"] = _number(group.attrs.get("margin", None if score is None else score - threshold))
    second_start = doc_turns[1].start
    record["spans"] = _spans(doc, group, turns, bases, lambda i: "first" if i < second_start else "second")
    if with_probs:
        scored = model_words(doc, numpy.asarray(group.attrs["token_probs"], dtype="float32"))
        record["words"] = {
            side: _words(scored, turn, base) for side, turn, base in zip(SIDES, turns, bases)
        }
    return record


def dumps(record: Mapping[str, Any]) -> bytes:
    """One JSON line (UTF-8; strings that cannot be encoded, e.g. lone
    surrogates in a speaker name, are written as ASCII escapes): a record or
    an errors-file entry as annotate writes it."""
    try:
        return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(record, ensure_ascii=True) + "\n").encode("ascii")


def convokit_records(directory, prefix: str) -> Path:
    """The records file of a ConvoKit output directory written with ``prefix``."""
    return Path(directory) / f"{prefix}{CONVOKIT_RECORDS}"


def convokit_errors(records: Path) -> Path:
    """The errors file written beside a ConvoKit output's records file."""
    return records.with_name(records.name[: -len(CONVOKIT_RECORDS)] + CONVOKIT_ERRORS)


def part_files(directory) -> List[Path]:
    """The record files of an ``annotate --engine ray`` OUTPUT directory: its
    ``*.jsonl`` files, sorted by name."""
    return sorted(p for p in Path(directory).glob("*.jsonl") if p.is_file())


def output_files(path) -> Tuple[List[Path], Path, Optional[Path]]:
    """``(record files, the run's OUTPUT path, the ConvoKit corpus or None)``
    of an annotate output of any kind: a JSON Lines file, the directory of
    parts a Ray run writes, or a ConvoKit corpus written with
    ``--output-format convokit`` (its ``*annotate.records.jsonl``).
    RecordsError when ``path`` is none of them."""
    path = Path(path)
    if path.is_file():
        return [path], path, None
    if not path.is_dir():
        raise RecordsError(f"{path}: no such file or directory")
    if (path / "utterances.jsonl").is_file():
        found = sorted(path.glob(f"*{CONVOKIT_RECORDS}"))
        if not found:
            raise RecordsError(f"{path} is a ConvoKit corpus without annotate records "
                               f"(*{CONVOKIT_RECORDS}): annotate it with --output-format convokit")
        return found, found[0], path
    files = part_files(path)
    if not files:
        raise RecordsError(f"{path} is a directory without .jsonl record files")
    return files, path, None


def read_lines(file) -> Iterator[Tuple[int, Dict[str, Any]]]:
    """``(line number, record)`` of each record of one file, blank lines
    skipped; RecordsError naming the file and line for a line that is not a
    JSON object with ``pair_id`` and ``score``."""
    with Path(file).open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as err:
                raise RecordsError(f"{file}, line {number}: not valid JSON ({err})") from None
            if not isinstance(record, dict) or "pair_id" not in record or "score" not in record:
                raise RecordsError(f"{file}, line {number}: not an annotate record (needs pair_id and score)")
            yield number, record


def read_records(paths: Sequence) -> Iterator[Dict[str, Any]]:
    """Every record of one or more annotate outputs (``output_files``), file
    by file, each in its order."""
    for path in [paths] if isinstance(paths, (str, Path)) else paths:
        for file in output_files(path)[0]:
            for _, record in read_lines(file):
                yield record
