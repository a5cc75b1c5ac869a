"""Reading annotate records for ``report`` and ``validate``, through the
record codec (``annotate/record_format.py``: the record and its files;
docs/annotate.md, "The record").

``read_records_and_runs(paths)`` (a ``Records``: the records and what their
runs left beside them; ``record_format.read_records`` yields the records
alone) takes annotate outputs of any kind: a JSON Lines file, the directory
of ``*.jsonl`` parts an ``annotate --engine ray`` run writes, or a ConvoKit
corpus written by ``annotate --output-format convokit`` (its
``*annotate.records.jsonl``, joined with the corpus' utterance, speaker and
conversation meta: ``join_corpus``, which ``report --dialogs`` uses too).
Next to each output it reads what the run left: the checkpoint (the model)
and the errors file (skipped and malformed counts). The pipeline's threshold
is the records' (``record_format.record_decision``). Records of several
models or thresholds are refused, naming both.
"""
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

from ..annotate.record_format import (CONVERSATION_ID, CONVOKIT_RECORDS, ERROR_KIND, FIRST, MALFORMED, PAIR_ID, SECOND,
                                      SKIPPED, TURN_FIELDS, WORDS, RecordsFileError, convokit_errors, error_entries,
                                      output_files, read_lines, record_decision)
from ..annotate.resume import default_errors_path, run_fingerprint
from ..dialogs import DialogCorpus, DialogFormatError, SourceOptions
from ..dialogs.convokit import read_convokit_meta

THRESHOLD_DIGITS = 4  # a record's threshold agrees with the pipeline's to float32 precision


@dataclass
class Records:
    """Every record of the inputs, with what the runs left beside them."""
    records: List[Dict[str, Any]]
    sources: List[str]
    model: Optional[str] = None
    threshold: Optional[float] = None
    skipped: int = 0
    malformed: int = 0
    # ConvoKit inputs: meta joined in (``fields`` of report/fields.py reads them)
    utterance_meta: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    utterance_time: Dict[str, Any] = field(default_factory=dict)
    speaker_meta: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    conversation_meta: Dict[str, Dict[str, Any]] = field(default_factory=dict)

    def by_id(self) -> Dict[str, Dict[str, Any]]:
        return {str(r[PAIR_ID.key]): r for r in self.records}


def _run_model(output: Path) -> Optional[str]:
    stored = run_fingerprint(output)
    if stored is None or "model" not in stored:
        return None
    model = stored["model"]
    name = (model.get("path") or model.get("name")) if isinstance(model, dict) else str(model)
    return str(name) if name else None  # a path as annotate resolved it, or a package name


def model_label(model: Optional[str]) -> str:
    """The model as the page names it: ``lang_name version`` from a pipeline
    directory's meta.json, else the directory's (or package's) name; never a
    path relative to wherever the command ran."""
    if not model:
        return "unknown (no checkpoint beside the records)"
    try:
        meta = json.loads((Path(model) / "meta.json").read_text(encoding="utf-8"))
        return f"{meta['lang']}_{meta['name']} {meta['version']}"
    except (OSError, ValueError, KeyError, TypeError):
        return Path(model).name or str(model)


def shown(path: str) -> str:
    """A path as the report shows it: relative to the working directory when inside it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def _error_counts(output: Path) -> Tuple[int, int]:
    errors = convokit_errors(output) if output.name.endswith(CONVOKIT_RECORDS) else default_errors_path(output)
    skipped = malformed = 0
    if errors.is_file():
        for entry in error_entries(errors):
            skipped += entry.get(ERROR_KIND) == SKIPPED
            malformed += entry.get(ERROR_KIND) == MALFORMED
    return skipped, malformed


def _thresholds(records: List[Dict[str, Any]], where: Callable[[int], str]) -> Dict[float, str]:
    """Each threshold found (``record_decision``, rounded) -> where it was first seen."""
    found: Dict[float, str] = {}
    for i, record in enumerate(records):
        threshold = record_decision(record).threshold
        if threshold is not None and math.isfinite(threshold):
            threshold = round(threshold, THRESHOLD_DIGITS)
            if threshold not in found:
                found[threshold] = where(i)
    return found


def join_corpus(data: Records, corpus: DialogCorpus) -> int:
    """Fill ``data``'s meta from the dialog corpus its records came from,
    read as annotate read it: the conversations' meta and the meta and
    timestamps of the turn-opening utterances its records name (through the
    corpus's reader; malformed records, which annotate reported, left out)
    and, for a ConvoKit corpus, the meta of its speakers and conversations
    (``dialogs.convokit.read_convokit_meta``, the reader annotate's speaker
    roles and ConvoKit output read them with). Returns how many of the
    records' conversations it found. DialogFormatError, ValueError or
    OSError when the corpus cannot be read."""
    conversations = {str(r.get(CONVERSATION_ID.key)) for r in data.records if r.get(CONVERSATION_ID.key) is not None}
    turns = [r.get(turn.key) or {} for r in data.records for turn in (FIRST, SECOND)]
    ids = [turn.get(TURN_FIELDS.utterance_ids) for turn in turns]
    utterances = {str(turn_ids[0]) for turn_ids in ids if turn_ids}  # turn openers
    for conversation in corpus.conversations(lambda problem: None):
        if conversation.id in conversations:
            data.conversation_meta[conversation.id] = conversation.meta
        for utt in conversation.utterances:
            if utt.id in utterances:
                data.utterance_meta[utt.id] = utt.meta
                data.utterance_time[utt.id] = utt.timestamp
    if corpus.reader.name == "convokit":
        meta = read_convokit_meta(corpus.path)
        data.speaker_meta.update(meta.speakers)
        data.conversation_meta.update(meta.conversations)
    return len(conversations & set(data.conversation_meta))


def read_records_and_runs(paths: Sequence[Path], words_of: Optional[Set[str]] = None) -> Records:
    """All records of ``paths`` (module doc); RecordsFileError for bad input,
    for records of several models or thresholds, or for a pair id twice.
    ``words_of``: keep the per-word probabilities (``WORDS``, the bulk of
    a ``--with-probs`` record) of these pair ids only (None: of all)."""
    if not paths:
        raise RecordsFileError("no records given")
    out = Records(records=[], sources=[shown(str(p)) for p in paths])
    models: Dict[str, str] = {}
    files_read: List[Path] = []
    corpora: List[Path] = []  # ConvoKit outputs: their meta joined once the records are read
    where: List[Tuple[int, int]] = []  # (file, line) of each record
    seen: Dict[str, int] = {}
    for path in map(Path, paths):
        files, output, corpus = output_files(path)
        model = _run_model(output)
        if model is not None:
            models.setdefault(model, str(path))
        skipped, malformed = _error_counts(output)
        out.skipped += skipped
        out.malformed += malformed
        if corpus is not None:
            corpora.append(corpus)
        for file in files:
            files_read.append(file)
            for number, record in read_lines(file):
                pair_id = str(record[PAIR_ID.key])
                if pair_id in seen:
                    first = where[seen[pair_id]]
                    raise RecordsFileError(f"pair id {pair_id!r} twice: {files_read[first[0]]}, line {first[1]} and "
                                       f"{file}, line {number} (give each annotate output once)")
                if words_of is not None and pair_id not in words_of:
                    record.pop(WORDS.key, None)
                seen[pair_id] = len(out.records)
                where.append((len(files_read) - 1, number))
                out.records.append(record)
    if len(models) > 1:
        (a, at), (b, bt) = list(models.items())[:2]
        raise RecordsFileError(f"records of two models: {a} ({at}) and {b} ({bt}); report one model's records at a time")
    thresholds = _thresholds(out.records, lambda i: f"{files_read[where[i][0]]}, line {where[i][1]}")
    if len(thresholds) > 1:
        (a, at), (b, bt) = sorted(thresholds.items())[:2]
        raise RecordsFileError(f"records of two thresholds: {a:g} ({at}) and {b:g} ({bt}); "
                           "report one pipeline's records at a time")
    if not out.records:
        raise RecordsFileError(f"no records in {', '.join(out.sources)}")
    for corpus in corpora:
        try:
            with DialogCorpus(corpus, SourceOptions(fmt="convokit")) as opened:
                join_corpus(out, opened)
        except (DialogFormatError, ValueError, OSError) as err:
            raise RecordsFileError(str(err)) from None
    out.model = next(iter(models), None)
    out.threshold = next(iter(thresholds), None)
    return out
