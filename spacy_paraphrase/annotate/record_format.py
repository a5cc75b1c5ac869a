"""The record codec: the annotate record a processed pair Doc becomes
(docs/annotate.md, "The record"), the errors-file entries, and the record
files annotate writes and reads. The local engine, the Ray engine, ConvoKit
output, ``visualize``, ``report`` and ``validate`` make and read records
through it. The record's keys are named here: its own (``RECORD_FIELDS``) and
its turns' (``TURN_FIELDS``), both a pair's JSON form (``TurnPair.to_json``,
whose keys ``dialogs/turns.py`` names: ``PAIR_KEYS``, ``TURN_KEYS``), and the
errors file's kinds (``ERROR_KIND``), and the keys inside a record's spans
(``SPAN_FIELDS``) and words (``WORD_FIELDS``). A pair travels from a dialog
reader to here as a ``TurnPair``.

- ``RECORD_FIELDS``: the record's keys, in order, each with its JSON type and
  where its value comes from; ``make_record``, the ConvoKit output's keys and
  the readers of records (``visualize``, ``report``) take them from it, each
  field by its name here (``SCORE.key``, never ``"score"``); ``TURN_FIELDS``:
  the keys inside its two turns (``TURN_FIELDS.text``); ``SPAN_FIELDS`` and
  ``WORD_FIELDS``: the keys of each entry of its spans and words.
- ``make_record(doc, pair, readout)``: the pair's ids, turns
  (``Turn.to_json``: offsets kept) and meta, plus the pair score, decision,
  spans (character offsets into each utterance's own text; a span crossing an
  utterance boundary becomes one span per utterance, each trimmed of
  whitespace at its edges) and, with ``with_probs``, one probability per
  whitespace word of each turn.
- ``record_decision(record)``: a record's decision and the threshold it was
  made at (``decide``, the one rule: the views of records and Docs, the
  report and the validation read decisions through it; records keep the
  margin, not the threshold).
- ``skip_entry(pair)`` / ``problem_entry(problem)``: the errors-file entries
  of a pair that cannot be annotated and of a malformed input record.
- ``dumps`` writes a record (or an errors-file entry) as one JSON line;
  ``output_files`` / ``read_records`` read every kind of annotate output.
"""
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Tuple

import numpy
from spacy.tokens import Doc, SpanGroup

from ..dialogs.convokit import CONVOKIT_UTTERANCES
from ..dialogs.turns import PAIR_KEYS, TURN_KEYS, Problem, Turn, TurnPair, UtteranceSpan
from ..pair_doc import get_turns, turn_text_problem
from ..paraphrase_spans.readout import Readout
from ..words import word_bounds, word_values

SIDES = (PAIR_KEYS.first, PAIR_KEYS.second)
# spaCy's default nlp.max_length: the longest turn (in characters) a run
# takes when it has no pipeline at hand to ask (the Ray engine's staging).
MAX_TURN_CHARS = 10 ** 6
# The records and errors files of a ConvoKit output (``--output-format convokit``),
# each name after the run's meta prefix (``sp_`` by default).
CONVOKIT_RECORDS = "annotate.records.jsonl"
CONVOKIT_ERRORS = "annotate.errors.jsonl"


class RecordsFileError(ValueError):
    """An annotate output (records files) that cannot be read, or
    (``report``) read together: one line, naming the file and line. Not
    ``table_reader.InputRowError``, a malformed row of an input file."""


_WORD = re.compile(r"\S+")


def invalid_side(pair: TurnPair, max_length: Optional[int] = None) -> Optional[Tuple[str, str]]:
    """``(side, reason)`` for the first turn of the pair that cannot be
    annotated (``pair_doc.turn_text_problem``; ``max_length``: the pipeline's
    ``nlp.max_length``), or None."""
    for side in SIDES:
        problem = turn_text_problem(getattr(pair, side).text, side, max_length)
        if problem is not None:
            return side, problem
    return None


def invalid_reason(pair: TurnPair, max_length: Optional[int] = None) -> Optional[str]:
    """Why this pair cannot be annotated (``invalid_side``), or None."""
    found = invalid_side(pair, max_length)
    return None if found is None else found[1]


# The errors file (docs/annotate.md, "Skips, malformed records and the summary"): each entry's kind under
# ``ERROR_KIND``, one of ``ERROR_KINDS``; ``skip_entry`` and ``problem_entry``
# build them, and every reader of an errors file compares with these names.
ERROR_KIND = "kind"
SKIPPED = "skipped"  # a pair that cannot be annotated
MALFORMED = "malformed"  # a malformed input record
ERROR_KINDS = (SKIPPED, MALFORMED)


def skip_entry(pair: TurnPair, max_length: int = MAX_TURN_CHARS) -> Optional[Dict[str, Any]]:
    """The errors-file entry of a pair that cannot be annotated
    (``invalid_side``), with the file and line of that turn's first
    utterance; None for a valid pair."""
    found = invalid_side(pair, max_length)
    if found is None:
        return None
    side, reason = found
    turn = getattr(pair, side)
    utterance = turn.utterances[0]
    return {ERROR_KIND: SKIPPED, "pair_id": pair.pair_id, "conversation_id": pair.conversation_id, "side": side,
            "utterance_ids": turn.utterance_ids, "path": utterance.path, "line": utterance.line, "reason": reason}


def problem_entry(problem: Problem) -> Dict[str, Any]:
    """The errors-file entry of a malformed record."""
    return {ERROR_KIND: MALFORMED, "path": problem.path, "line": problem.line, "reason": problem.reason}


def error_entries(path: Path) -> Iterator[Dict[str, Any]]:
    """The entries of an errors file (``skip_entry``, ``problem_entry``), a
    line that is not a JSON object (a file edited or cut short) left out."""
    with Path(path).open(encoding="utf-8") as lines:
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict):
                yield entry


def as_number(value: Any) -> Optional[float]:
    """A number of a record as written and as read: a float, None for a
    missing value, NaN, a yes/no or anything that is no number."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def _turn_base(doc: Doc, span, text: str, side: str) -> int:
    """Where the turn's text starts in the Doc's text, checked at the turn's
    first and last tokens (``doc.text`` itself costs a pass over all tokens)."""
    base = span.start_char
    first, last = doc[span.start], doc[span.end - 1]
    end = last.idx - base + len(last.text)
    if not text.startswith(first.text) or end > len(text) or text[last.idx - base : end] != last.text:
        raise ValueError(
            f"The pair Doc's {side} turn does not hold the pair's {side} text: the Doc "
            "was not built from this pair by make_pair_doc."
        )
    return base


def model_words(doc: Doc, probs: numpy.ndarray) -> List[Tuple[int, int, float]]:
    """``(char start, char end, probability)`` of every word the model scores
    (``words.word_bounds`` / ``word_values``); whitespace tokens, words of
    their own there, never overlap a whitespace word of the text."""
    bounds = word_bounds(doc)
    return [(doc[start].idx, doc[end - 1].idx + len(doc[end - 1].text), float(value))
            for (start, end), value in zip(bounds, word_values(doc, probs, bounds))]


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
        k = j
        while k < len(scored) and scored[k][0] < hi:
            k += 1
        probs = [prob for _, _, prob in scored[j:k] if not math.isnan(prob)]
        piece = turn.split_span(match.start(), match.end())[0]
        out.append(dict(zip(WORD_FIELDS, (*piece, max(probs) if probs else None))))
    return out


class Scored(NamedTuple):
    """A processed pair Doc with what its record is read from: the pair it
    was built from, the pipeline's readout, its span group, where each turn
    starts in the Doc's text, the second turn's first token, and whether
    words are written."""

    doc: Doc
    pair: TurnPair
    readout: Readout
    group: SpanGroup
    bases: Tuple[int, int]
    second_start: int
    with_probs: bool

    @property
    def cat(self) -> float:
        """The pair score as the pipeline wrote it (``doc.cats[cats_key]``)."""
        return self.doc.cats[self.readout.cats_key]


@dataclass(frozen=True)
class RecordField:
    """One key of the annotate record: its JSON type, where its value comes
    from (``value(scored)``), whether it is left out when that is None
    (``optional``), and whether a ConvoKit output copies it into the meta of
    the second turn's utterances (``convokit``)."""

    key: str
    type: type
    value: Callable[[Scored], Any]
    optional: bool = False
    convokit: bool = False


def _turn_spans(s: Scored) -> List[Dict[str, Any]]:
    out = []
    for span, score in zip(s.group, s.group.attrs.get("scores") or [None] * len(s.group)):
        i = int(span.start >= s.second_start)
        turn = (s.pair.first, s.pair.second)[i]
        for piece in turn.split_span(span.start_char - s.bases[i], span.end_char - s.bases[i]):
            # a run may go on over whitespace tokens into the next utterance:
            # each piece is trimmed of whitespace at its edges (none is left empty)
            text = piece.text.strip()
            if text:
                start = piece.start + len(piece.text) - len(piece.text.lstrip())
                out.append(dict(zip(SPAN_FIELDS, (SIDES[i], span.label_, piece.utterance_id, start,
                                                  start + len(text), text, as_number(score)))))
    return out


def _turn_words(s: Scored) -> Optional[Dict[str, List[Dict[str, Any]]]]:
    if not s.with_probs:
        return None
    scored = model_words(s.doc, numpy.asarray(s.group.attrs["token_probs"], dtype="float32"))
    return {side: _words(scored, turn, base)
            for side, turn, base in zip(SIDES, (s.pair.first, s.pair.second), s.bases)}


# The record's fields (docs/annotate.md, "The record"), each named on its own: the
# readers of records (``visualize``, ``report``) read ``record[SCORE.key]``, never
# the key itself, so that a key renamed here is renamed for them too.
# The first five are the pair's JSON form (``TurnPair.to_json``, ``PAIR_KEYS``);
# the keys inside ``FIRST`` and ``SECOND`` are a turn's (``TURN_FIELDS``).
PAIR_ID = RecordField(PAIR_KEYS.pair_id, str, lambda s: s.pair.pair_id, convokit=True)
CONVERSATION_ID = RecordField(PAIR_KEYS.conversation_id, str, lambda s: s.pair.conversation_id)
FIRST = RecordField(PAIR_KEYS.first, dict, lambda s: s.pair.first.to_json())
SECOND = RecordField(PAIR_KEYS.second, dict, lambda s: s.pair.second.to_json())
META = RecordField(PAIR_KEYS.meta, dict, lambda s: dict(s.pair.meta) or None, optional=True)  # pair files' extra columns
SCORE = RecordField("score", float, lambda s: as_number(s.cat), convokit=True)
IS_PARAPHRASE = RecordField("is_paraphrase", bool, lambda s: s.readout.is_paraphrase(s.cat), convokit=True)
VOTE_SHARE = RecordField("vote_share", float, lambda s: as_number(s.group.attrs["vote_share"]), convokit=True)
AGREEMENT = RecordField("agreement", float, lambda s: as_number(s.group.attrs["agreement"]), convokit=True)
MARGIN = RecordField("margin", float, lambda s: as_number(s.readout.margin(s.cat)), convokit=True)
SPANS = RecordField("spans", list, _turn_spans)
WORDS = RecordField("words", dict, _turn_words, optional=True)  # --with-probs only

# The record, key by key in the order written.
RECORD_FIELDS = (PAIR_ID, CONVERSATION_ID, FIRST, SECOND, META, SCORE, IS_PARAPHRASE, VOTE_SHARE, AGREEMENT, MARGIN,
                 SPANS, WORDS)
# The keys of each turn of a record (``FIRST``, ``SECOND``): a turn's JSON form
# (``Turn.to_json``), read as ``TURN_FIELDS.utterance_ids``, never the key itself.
TURN_FIELDS = TURN_KEYS


class SpanKeys(NamedTuple):
    side: str
    label: str
    utterance_id: str
    start: str
    end: str
    text: str
    score: str


class WordKeys(NamedTuple):
    utterance_id: str  # the first four: where the word is (``dialogs.turns.UtteranceSpan``)
    start: str
    end: str
    text: str
    prob: str


# The keys of each entry of a record's ``SPANS`` (one span inside one utterance:
# offsets into that utterance's text) and of its ``WORDS`` lists, read as
# ``SPAN_FIELDS.utterance_id``, never the key itself.
SPAN_FIELDS = SpanKeys(*SpanKeys._fields)
WORD_FIELDS = WordKeys(*WordKeys._fields)
assert WORD_FIELDS[:4] == UtteranceSpan._fields


class Decision(NamedTuple):
    """A pair's decision as its record (or processed Doc) tells it: whether
    it is a paraphrase, the pair threshold it was made at and its margin
    (pair score − threshold); each None where that cannot be told."""

    is_paraphrase: Optional[bool]
    threshold: Optional[float]
    margin: Optional[float]


def decide(score: Optional[float], margin: Optional[float] = None, stored: Any = None,
           threshold: Optional[float] = None) -> Decision:
    """The one rule of a pair's decision and threshold, from its pair score,
    its margin and the decision it keeps (``stored``: a record's
    ``is_paraphrase``; None when it keeps none):

    - a given ``threshold`` wins: paraphrase when score >= threshold, the
      margin measured from it;
    - else the pipeline's: records and Docs keep the margin, not the
      threshold, so the threshold is score − margin; the decision is the
      stored one, or margin >= 0 without one;
    - else (no score or no margin) the stored decision alone."""
    if threshold is not None and score is not None:
        threshold = float(threshold)
        return Decision(score >= threshold, threshold, score - threshold)
    if margin is not None and score is not None:
        return Decision(bool(stored) if stored is not None else margin >= 0, score - margin, margin)
    return Decision(None if stored is None else bool(stored), None, None)


def record_decision(record: Mapping[str, Any], threshold: Optional[float] = None) -> Decision:
    """A record's decision and threshold (``decide``), read from its
    ``SCORE``, ``MARGIN`` and ``IS_PARAPHRASE``; ``threshold``: decide at
    this threshold instead of the pipeline's."""
    return decide(as_number(record.get(SCORE.key)), as_number(record.get(MARGIN.key)),
                  record.get(IS_PARAPHRASE.key), threshold)


def make_record(doc: Doc, pair: TurnPair, readout: Readout, *, with_probs: bool = False) -> Dict[str, Any]:
    """The annotate record of a pair Doc built from ``pair`` and processed
    by the pipeline whose readout is ``readout`` (module doc;
    ``RECORD_FIELDS``): the decision and the margin are the readout's."""
    group = doc.spans.get(readout.spans_key)
    if group is None or "pair_score" not in group.attrs:
        raise ValueError(
            f"doc.spans[{readout.spans_key!r}] has no pair score: run a paraphrase_spans component "
            "with this spans_key on the Doc first."
        )
    turns = get_turns(doc)
    bases = tuple(_turn_base(doc, span, turn.text, side)
                  for span, turn, side in zip(turns, (pair.first, pair.second), SIDES))
    scored = Scored(doc, pair, readout, group, bases, turns[1].start, with_probs)  # type: ignore[arg-type]
    record: Dict[str, Any] = {}
    for f in RECORD_FIELDS:
        value = f.value(scored)
        if value is not None or not f.optional:
            record[f.key] = value
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
    RecordsFileError when ``path`` is none of them. The one guess of an
    annotate output's kind (a dialog input's format: ``readers.guess_format``;
    ``visualize`` tells a ``.spacy`` file from these first)."""
    path = Path(path)
    if path.is_file():
        return [path], path, None
    if not path.is_dir():
        raise RecordsFileError(f"{path}: no such file or directory")
    if (path / CONVOKIT_UTTERANCES).is_file():
        found = sorted(path.glob(f"*{CONVOKIT_RECORDS}"))
        if not found:
            raise RecordsFileError(f"{path} is a ConvoKit corpus without annotate records "
                               f"(*{CONVOKIT_RECORDS}): annotate it with --output-format convokit")
        return found, found[0], path
    files = part_files(path)
    if not files:
        raise RecordsFileError(f"{path} is a directory without .jsonl record files")
    return files, path, None


def read_lines(file) -> Iterator[Tuple[int, Dict[str, Any]]]:
    """``(line number, record)`` of each record of one file, blank lines
    skipped; RecordsFileError naming the file and line for a line that is not a
    JSON object with a pair id and a score (``PAIR_ID``, ``SCORE``)."""
    with Path(file).open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as err:
                raise RecordsFileError(f"{file}, line {number}: not valid JSON ({err})") from None
            if not isinstance(record, dict) or PAIR_ID.key not in record or SCORE.key not in record:
                raise RecordsFileError(f"{file}, line {number}: not an annotate record "
                                   f"(needs {PAIR_ID.key} and {SCORE.key})")
            yield number, record


def read_records(paths: Sequence) -> Iterator[Dict[str, Any]]:
    """Every record of one or more annotate outputs (``output_files``), file
    by file, each in its order."""
    for path in [paths] if isinstance(paths, (str, Path)) else paths:
        for file in output_files(path)[0]:
            for _, record in read_lines(file):
                yield record
