"""Dialog corpus readers: MediaSum-style and chat JSON Lines (here), ConvoKit
corpora (``convokit``), turn tables and pair files (``tables``), and
``READERS``, the one table of input formats: each format's reader, how its
input is recognised, the options its reader takes and the files of an input
it reads. Guessing a format, the format list and the dispatch all read that
table.

Every reader streams: it yields one ``Conversation`` at a time (a pair file's
reader: one ``TurnPair``) and reports each malformed record to ``on_problem``
(a ``Problem``: file, line, reason) and goes on; without ``on_problem`` the
first one raises ``MalformedRecordError``. Formats and rules:
docs/dialog-formats.md.
"""
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple

from .convokit import CONVOKIT_UTTERANCES, convokit_files, read_convokit
from .turns import Conversation, DialogFormatError, OnProblem, Problem, Utterance, reporter
from ..table_reader import InputRowError, find_pair_columns
from .fields import as_id, as_object, as_speaker, as_text, field, json_type
from .streaming import check_file, iter_json_lines, read_first_record
from .tables import read_pair_file, read_turn_table


def unify_speaker_names(names: Sequence[str]) -> List[str]:
    """ContextDeP's speaker normalisation within one transcript: a name
    contained in a longer name of the same transcript becomes that longer
    name (the last of them by length), e.g. ``PROFFITT`` -> ``STEVE PROFFITT``."""
    ordered = sorted(names, key=len)
    longest = {name: next((other for other in reversed(ordered[i + 1:]) if name in other), name)
               for i, name in enumerate(ordered)}
    return [longest[name] for name in names]


def _read_conversation_lines(
    path: Path, on_problem: Optional[OnProblem], made_ids: bool, own_keys: Tuple[str, ...],
    items: Callable[[Dict[str, Any]], list], utterance: Callable[[int, Any], Tuple[str, str, Dict[str, Any]]],
) -> Iterator[Conversation]:
    """Conversations of a JSON Lines file with one conversation per line
    (MediaSum-style, chat). Its id is the ``id`` field (with ``made_ids``, a
    missing or null one is ``{file stem}:{line}``), new in the file;
    ``items(record)`` checks the record and gives its utterances' items,
    ``utterance(i, item)`` the (speaker, text, meta) of item i (InputRowError:
    the utterance is left out). Utterance i has id ``{conversation}-{i}`` and
    replies to utterance i-1; the record's keys other than ``own_keys`` go to
    the conversation's meta."""
    report = reporter(on_problem)
    seen: Set[str] = set()
    for line, _, _, record in iter_json_lines(path, report):
        try:
            record = as_object(record)
            value = record.get("id") if made_ids else field(record, "id")
            conversation_id = f"{path.stem}:{line}" if made_ids and value is None else as_id(value, "id")
            if conversation_id in seen:
                raise InputRowError(f"conversation id {conversation_id!r} repeated")
            parts = items(record)
        except InputRowError as err:
            report(Problem(str(path), line, str(err)))
            continue
        seen.add(conversation_id)
        utterances = []
        for i, part in enumerate(parts):
            try:
                speaker, text, meta = utterance(i, part)
            except InputRowError as err:
                report(Problem(str(path), line, f"{err} (utterance {conversation_id}-{i} left out)"))
                continue
            reply_to = f"{conversation_id}-{i - 1}" if i else None
            utterances.append(Utterance(f"{conversation_id}-{i}", conversation_id, speaker, text,
                                        reply_to=reply_to, meta=meta, path=str(path), line=line))
        meta = {key: value for key, value in record.items() if key not in own_keys}
        yield Conversation(conversation_id, utterances, meta=meta, path=str(path), line=line)


def read_mediasum(
    path, *, unify_names: bool = False, on_problem: Optional[OnProblem] = None
) -> Iterator[Conversation]:
    """Conversations of a MediaSum-style JSON Lines file, one per line:
    ``{id, utt: [...], speaker: [...], ...}`` (parallel lists; the other keys
    go to the conversation's meta). Utterance i (0-based list index) has id
    ``{id}-{i}``, as ContextDeP's QIDs, and replies to utterance i-1.
    ``unify_names`` applies ``unify_speaker_names`` (ContextDeP's turns); the
    original name is then kept in ``meta["speaker_raw"]`` where it changed."""

    def items(record):
        texts, speakers = field(record, "utt"), field(record, "speaker")
        for key, value in (("utt", texts), ("speaker", speakers)):
            if not isinstance(value, list):
                raise InputRowError(f"{key} must be a list, got {json_type(value)}")
        if len(texts) != len(speakers):
            raise InputRowError(f"'utt' has {len(texts)} items but 'speaker' has {len(speakers)}")
        unify = unify_names and all(isinstance(name, str) for name in speakers)
        return list(zip(texts, speakers, unify_speaker_names(speakers) if unify else speakers))

    def utterance(i, item):
        text, speaker, name = item
        text = as_text(text, f"utt[{i}]")
        as_speaker(speaker, f"speaker[{i}]")
        return str(name), text, {"speaker_raw": speaker} if name != speaker else {}

    return _read_conversation_lines(Path(path), on_problem, False, ("id", "utt", "speaker"), items, utterance)


def read_chat(path, *, on_problem: Optional[OnProblem] = None) -> Iterator[Conversation]:
    """Conversations of a chat JSON Lines file, one per line:
    ``{"id"?: ..., "messages": [{"role", "content", ...}, ...]}``. A missing id
    is ``{file stem}:{line}``; message i has id ``{conversation}-{i}``, speaker
    ``role``, text ``content`` and replies to message i-1; other keys go to
    the meta of the message or conversation."""

    def items(record):
        messages = field(record, "messages")
        if not isinstance(messages, list):
            raise InputRowError(f"messages must be a list, got {json_type(messages)}")
        return messages

    def utterance(i, message):
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            raise InputRowError(f"{where} must be an object, got {json_type(message)}")
        speaker = as_speaker(field(message, "role", what=f"{where}.role"), f"{where}.role")
        text = as_text(field(message, "content", what=f"{where}.content"), f"{where}.content")
        return speaker, text, {key: value for key, value in message.items() if key not in ("role", "content")}

    return _read_conversation_lines(Path(path), on_problem, True, ("id", "messages"), items, utterance)


@dataclass(frozen=True)
class DialogReader:
    """One input format: its ``name`` (``--format``), its reader (``read(path,
    *, on_problem, **options)``, yielding conversations, or turn pairs when
    ``yields_pairs``; a generator or a ``streaming.Stream``, whose ``close``
    closes the input), ``recognise`` (whether a file's first record, a
    JSON object or a table's header, is of this format; None: never guessed
    from a record) and ``files`` (the files of an input that a run reads: what
    resuming compares and annotate never writes over)."""

    name: str
    read: Callable[..., Iterator[Any]]
    recognise: Optional[Callable[[Any], bool]]
    yields_pairs: bool = False
    files: Callable[[Path], List[Path]] = lambda path: [path]

    @property
    def options(self) -> Dict[str, Any]:
        """The options the reader takes (name -> default), ``on_problem`` aside."""
        parameters = inspect.signature(self.read).parameters.values()
        return {p.name: p.default for p in parameters if p.kind is p.KEYWORD_ONLY and p.name != "on_problem"}


# In guessing order: the first format that recognises a file's first record is its format.
READERS: Dict[str, DialogReader] = {reader.name: reader for reader in (
    DialogReader("convokit", read_convokit, None, files=convokit_files),  # by path: see guess_format
    DialogReader("mediasum", read_mediasum, lambda first: isinstance(first, dict) and "utt" in first and "speaker" in first),
    DialogReader("chat", read_chat, lambda first: isinstance(first, dict) and "messages" in first),
    DialogReader("turns", read_turn_table, lambda first: "conversation_id" in first),
    DialogReader("pairs", read_pair_file, lambda first: find_pair_columns(list(first)) is not None, yields_pairs=True),
)}
FORMATS = tuple(READERS)


def reader_for(fmt: str) -> DialogReader:
    """The reader of format ``fmt``; DialogFormatError for an unknown one."""
    if fmt not in READERS:
        raise DialogFormatError(f"Unknown dialog format {fmt!r}; choose one of {', '.join(FORMATS)}.")
    return READERS[fmt]


def _unclear(path: Path, why: str) -> DialogFormatError:
    return DialogFormatError(f"{path}: cannot guess the dialog format ({why}); pass --format "
                             f"(one of {', '.join(FORMATS)}).")


def guess_format(path) -> str:
    """One of FORMATS: ``convokit`` for a directory holding
    ``utterances.jsonl`` or that file itself, else the first format of
    ``READERS`` that recognises the file's first record; DialogFormatError
    naming ``--format`` when unclear. The one guess of a dialog input's
    format; three other guesses tell other things apart: ``annotate/stdio.py``
    JSON Lines from TSV on standard input (which has no name for the table
    reader to go by), ``record_format.output_files`` the kinds of annotate
    output, and ``visualize/inputs.py`` a ``.spacy`` file from those."""
    path = Path(path)
    if path.is_dir():
        if (path / CONVOKIT_UTTERANCES).is_file():
            return "convokit"
        raise _unclear(path, f"a directory without {CONVOKIT_UTTERANCES}")
    check_file(path)
    if path.name == CONVOKIT_UTTERANCES:
        return "convokit"
    try:
        fmt, first = read_first_record(path)
    except DialogFormatError as err:
        raise _unclear(path, str(err)) from None
    if fmt == "jsonl" and not isinstance(first, dict):
        raise _unclear(path, f"the first record is a {json_type(first)}, not an object")
    found = next((reader.name for reader in READERS.values() if reader.recognise and reader.recognise(first)), None)
    if found is None:
        raise _unclear(path, f"first record's keys {sorted(first)[:10]}" if fmt == "jsonl" else f"header {first[:10]}")
    return found


def no_dialogs(path) -> DialogFormatError:
    """The error for reading the conversations of a pair file."""
    return DialogFormatError(f"{path}: a pair file holds pairs, not dialogs; read it with read_turn_pairs.")


def read_dialogs(
    path, fmt: Optional[str] = None, *, on_problem: Optional[OnProblem] = None, **options: Any
) -> Iterator[Conversation]:
    """Conversations of ``path`` in format ``fmt`` (guessed when None);
    ``options`` go to that format's reader. Pair files hold pairs, not
    dialogs (``no_dialogs``): read them with ``read_turn_pairs``."""
    reader = reader_for(fmt or guess_format(path))
    if reader.yields_pairs:
        raise no_dialogs(path)
    return reader.read(path, on_problem=on_problem, **options)

