"""The ConvoKit corpus: its file names (each spelled out here only), its
utterances as conversations (``read_convokit``, the ``convokit`` format's
reader in ``readers.READERS``), its speakers and conversations with their
meta, and everything the report joins (``read_convokit_meta``). annotate and
report read a corpus through these functions alike, so the meta a report
groups by is the meta annotate saw.

Files are read as UTF-8 with or without a byte order mark. A speaker's entry
is ConvoKit 5's ``{"meta": {...}, "vectors": [...]}`` or, in older dumps
(``users.json``) and hand-made corpora, the meta itself (``speaker_meta``); a
conversation's likewise (``conversation_meta``). Formats and rules:
docs/dialog-formats.md.
"""
import json
from dataclasses import dataclass, field as dataclass_field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence

from ..table_reader import InputRowError, read_json_at
from .fields import IdTypes, as_id, as_object, as_order, as_speaker, as_text, field, json_type
from .streaming import iter_json_lines, read_grouped
from .turns import Conversation, DialogFormatError, OnProblem, Utterance, reporter

CONVOKIT_UTTERANCES = "utterances.jsonl"
# speakers.json; users.json in corpora written before ConvoKit 2.3 (read when there is no speakers.json)
CONVOKIT_SPEAKERS = ("speakers.json", "users.json")
CONVOKIT_CONVERSATIONS = "conversations.json"
CONVOKIT_INDEX = "index.json"
# The files of a ConvoKit directory that a run reads (the utterances, the
# speakers for speaker-meta roles, and what --output-format convokit merges).
CONVOKIT_READ = (CONVOKIT_UTTERANCES, *CONVOKIT_SPEAKERS, CONVOKIT_CONVERSATIONS, CONVOKIT_INDEX)


def convokit_folder(input_path) -> Optional[Path]:
    """The ConvoKit directory of an input (the directory itself, or the one
    holding the given ``utterances.jsonl``); None for other inputs."""
    path = Path(input_path)
    if path.is_dir():
        return path
    if path.name == CONVOKIT_UTTERANCES:
        return path.parent
    return None


def convokit_corpus(input_path) -> Optional[Path]:
    """``convokit_folder`` when it holds ``utterances.jsonl`` (a ConvoKit
    corpus); None otherwise."""
    folder = convokit_folder(input_path)
    return folder if folder is not None and (folder / CONVOKIT_UTTERANCES).is_file() else None


def convokit_files(path: Path) -> List[Path]:
    """The files of a ConvoKit corpus that are read; a file named on its own
    (``--format convokit FILE``) is that file."""
    folder = convokit_folder(path)
    if folder is None:
        return [path]
    return [folder / name for name in sorted(CONVOKIT_READ) if (folder / name).is_file()]


def _utterance_file(path: Path) -> Path:
    if path.is_dir():
        path = path / CONVOKIT_UTTERANCES
    if not path.is_file():
        json_only = (path.parent / "utterances.json").exists()
        hint = f" (only {CONVOKIT_UTTERANCES} is read, not utterances.json)" if json_only else ""
        raise DialogFormatError(f"{path}: ConvoKit utterance file not found{hint}")
    return path


def read_convokit(
    path, *, by_timestamp: bool = False, on_problem: Optional[OnProblem] = None
) -> Iterator[Conversation]:
    """Conversations of a ConvoKit corpus directory (or its ``utterances.jsonl``).

    Fields as ConvoKit's loader reads them: ``id``, ``speaker`` (or ``user``),
    ``conversation_id`` (or ``root``), ``reply-to`` (or ``reply_to``),
    ``timestamp``, ``text``, ``meta``. Utterances of a conversation may be
    anywhere in the file; their order is the file order, or with
    ``by_timestamp`` the (numeric) timestamp order, ties in file order."""
    utt_file = _utterance_file(Path(path))
    report = reporter(on_problem)
    id_types = IdTypes("conversation_id")

    def parse(record, line):
        record = as_object(record)
        utt_id = as_id(field(record, "id"), "id")
        speaker = as_speaker(field(record, "speaker", "user"))
        raw_conversation_id = field(record, "conversation_id", "root")
        conversation_id = as_id(raw_conversation_id, "conversation_id")
        text = as_text(field(record, "text"))
        reply_to = record.get("reply-to", record.get("reply_to"))
        reply_to = None if reply_to is None else as_id(reply_to, "reply-to")
        timestamp = record.get("timestamp")
        order = as_order(timestamp, "timestamp") if by_timestamp else 0.0
        meta = record.get("meta")
        meta = {} if meta is None else meta
        if not isinstance(meta, dict):
            raise InputRowError(f"meta must be an object, got {json_type(meta)}")
        id_types.check(raw_conversation_id, conversation_id)

        def make(position: int) -> Utterance:
            return Utterance(utt_id, conversation_id, speaker, text, reply_to=reply_to,
                             timestamp=timestamp, meta=meta, path=str(utt_file), line=line)

        return conversation_id, order, make

    yield from read_grouped(utt_file, iter_json_lines(utt_file, report), read_json_at, parse, report)


def load_json_object(path: Path, what: str = "a JSON object") -> Dict[str, Any]:
    """The JSON object in one of a corpus's ``.json`` files (a byte order mark
    allowed); DialogFormatError naming the file (and line) when it is not
    valid UTF-8, not valid JSON or not an object (``what``: the message's
    name for an object)."""
    with open(path, encoding="utf-8-sig") as fh:
        try:
            value = json.load(fh)
        except json.JSONDecodeError as err:
            raise DialogFormatError(f"{path}, line {err.lineno}: not valid JSON ({err.msg})") from None
        except (UnicodeDecodeError, RecursionError) as err:
            why = "nested too deeply" if isinstance(err, RecursionError) else f"not valid UTF-8 ({err.reason})"
            raise DialogFormatError(f"{path}: not valid JSON ({why})") from None
    if not isinstance(value, dict):
        raise DialogFormatError(f"{path}: expected {what}, got {json_type(value)}")
    return value


def _folder(path) -> Path:
    """The folder of a corpus given as its directory or its utterance file."""
    path = Path(path)
    return path if path.is_dir() else path.parent


def speakers_file(path) -> Optional[Path]:
    """The speakers file of a ConvoKit corpus (``CONVOKIT_SPEAKERS``, the
    first there is), given the corpus or its utterance file; None without one."""
    folder = _folder(path)
    return next((folder / name for name in CONVOKIT_SPEAKERS if (folder / name).is_file()), None)


def speaker_meta(entry: Any) -> Dict[str, Any]:
    """The meta of a speakers file's entry: its ``meta`` (ConvoKit 5), or
    the entry itself (flat, as older and hand-made corpora); {} when that is
    no object."""
    meta = entry.get("meta", entry) if isinstance(entry, dict) else {}
    return meta if isinstance(meta, dict) else {}


def read_convokit_speakers(path, fields: Optional[Sequence[str]] = None) -> Dict[str, Dict[str, Any]]:
    """Speaker id -> meta (``speaker_meta``) from a ConvoKit corpus's
    ``speakers.json`` (or ``users.json``), for speaker roles; with
    ``fields``, only those meta fields are kept (less memory on large
    corpora). DialogFormatError when there is no such file or it is no
    JSON object."""
    found = speakers_file(path)
    if found is None:
        raise DialogFormatError(f"{_folder(path)}: no {' (or '.join(CONVOKIT_SPEAKERS)})")
    speakers = {}
    for speaker, entry in load_json_object(found, "an object of speakers").items():
        meta = speaker_meta(entry)
        speakers[speaker] = meta if fields is None else {k: meta[k] for k in fields if k in meta}
    return speakers


def conversation_meta(entry: Any) -> Any:
    """The meta of a ``conversations.json`` entry: its ``meta`` when the entry
    is ConvoKit 5's ``{"meta", "vectors"}``, else the entry itself (flat; what
    annotate's ConvoKit output adds its keys to, so it must be an object there)."""
    if isinstance(entry, dict) and isinstance(entry.get("meta"), dict) and set(entry) <= {"meta", "vectors"}:
        return entry["meta"]
    return entry


@dataclass
class ConvoKitMeta:
    """What a ConvoKit corpus says beyond the texts, by id: each utterance's
    meta and timestamp, each speaker's meta, each conversation's meta."""

    utterances: Dict[str, Dict[str, Any]] = dataclass_field(default_factory=dict)
    timestamps: Dict[str, Any] = dataclass_field(default_factory=dict)
    speakers: Dict[str, Dict[str, Any]] = dataclass_field(default_factory=dict)
    conversations: Dict[str, Dict[str, Any]] = dataclass_field(default_factory=dict)


def read_convokit_meta(corpus) -> ConvoKitMeta:
    """The meta of a ConvoKit corpus (directory or utterance file): its
    utterances as ``read_convokit`` reads them (a malformed record, which
    annotate reported, left out), its speakers as ``read_convokit_speakers``
    (none without a speakers file), its conversations' meta
    (``conversation_meta``; an entry that is no object left out).
    DialogFormatError for a file that cannot be read."""
    out = ConvoKitMeta()
    for conversation in read_convokit(corpus, on_problem=lambda problem: None):
        for utterance in conversation.utterances:
            out.utterances[utterance.id] = utterance.meta
            out.timestamps[utterance.id] = utterance.timestamp
    if speakers_file(corpus) is not None:
        out.speakers = read_convokit_speakers(corpus)
    conversations = _folder(corpus) / CONVOKIT_CONVERSATIONS
    if conversations.is_file():
        entries = load_json_object(conversations)
        out.conversations = {str(key): meta for key, entry in entries.items()
                             if isinstance(meta := conversation_meta(entry), dict)}
    return out
