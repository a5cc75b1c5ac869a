"""Turn pairs of a dialog corpus (docs/dialog-formats.md): the pairing rules,
and ``DialogCorpus``, a corpus opened once for its pairs.

``consecutive`` (the way ContextDeP was built): a run of consecutive
utterances of one speaker is one turn, and each turn is paired with the next
one; ``pair_id`` is the id of the first turn's first utterance (for MediaSum
ids, ContextDeP's QID). ``reply-to`` (threaded data): each utterance is paired
with the utterance it replies to, without merging; ``pair_id`` is
``{parent id}>{reply id}``. Pairs never join two conversations, and both
turns of a pair always have different speakers.

Opening a ``DialogCorpus`` guesses its format once (``readers.guess_format``),
checks the options once against that format's entry of ``readers.READERS``
and starts its reader once, so that what the reader checks when started (a
table's header and columns) fails before a run writes anything; the corpus
then offers its pairs, role-filtered, their count and its conversations, each
pass read by a reader of its own (the first by the one started), and
``close`` closes every reader it started, a pass read to its end or not.
"""
from contextlib import ExitStack
from itertools import groupby, islice
from operator import attrgetter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

from .convokit import read_convokit_speakers
from .readers import guess_format, no_dialogs, reader_for
from .roles import RoleOf, filter_roles, role_getter
from .streaming import Stream
from .turns import Conversation, DialogFormatError, OnProblem, Problem, Turn, TurnPair, Utterance, reporter

MODES = ("consecutive", "reply-to")
# How the reader options of the command line are spelled there.
OPTION_FLAGS = {"unify_names": "--unify-names", "by_timestamp": "--by-timestamp"}


def unknown_mode(mode: str) -> ValueError:
    """The error for a pairing mode not in MODES."""
    return ValueError(f"Unknown pairing mode {mode!r}; choose one of {', '.join(MODES)}.")


def build_turns(utterances: Iterable[Utterance]) -> List[Turn]:
    """Merge each run of consecutive utterances with the same speaker into one turn."""
    return [Turn.of(list(run)) for _, run in groupby(utterances, key=attrgetter("speaker"))]


def pair_consecutive(conversation: Conversation) -> Iterator[TurnPair]:
    """(turn i, turn i+1) for each speaker change, as ContextDeP did."""
    turns = build_turns(conversation.utterances)
    for first, second in zip(turns, turns[1:]):
        yield TurnPair(first.utterances[0].id, conversation.id, first, second)


def pair_replies(conversation: Conversation) -> Iterator[TurnPair]:
    """(parent, reply) for each utterance whose ``reply_to`` is another
    speaker's utterance of the same conversation, in the replies' order. A
    reply to an utterance not in the conversation, or to the same speaker,
    gives no pair."""
    by_id = {utterance.id: utterance for utterance in conversation.utterances}
    for utterance in conversation.utterances:
        parent = by_id.get(utterance.reply_to) if utterance.reply_to is not None else None
        if parent is None or parent.speaker == utterance.speaker or parent is utterance:
            continue
        pair_id = f"{parent.id}>{utterance.id}"
        yield TurnPair(pair_id, conversation.id, Turn.of([parent]), Turn.of([utterance]))


def pair_conversation(conversation: Conversation, mode: str = "consecutive") -> Iterator[TurnPair]:
    """The turn pairs of one conversation under ``mode`` (one of MODES)."""
    if mode == "consecutive":
        return pair_consecutive(conversation)
    if mode == "reply-to":
        return pair_replies(conversation)
    raise unknown_mode(mode)


@dataclass
class SourceOptions:
    """How pairs are read: format (None = guessed), pairing mode, role
    filter (``role_source`` as ``dialogs.role_getter``; ``role_patterns`` for
    source ``pattern``; ``first_roles`` / ``second_roles`` empty = any) and
    the format reader's own options (e.g. ``unify_names``, ``text1``)."""

    fmt: Optional[str] = None
    pairing: str = "consecutive"
    role_source: str = "speaker"
    role_patterns: Dict[str, str] = field(default_factory=dict)
    first_roles: List[str] = field(default_factory=list)
    second_roles: List[str] = field(default_factory=list)
    reader_options: Dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # checked when the options are made, so that a bad mode fails before a run reads or removes anything
        if self.pairing not in MODES:
            raise unknown_mode(self.pairing)


def _flag(key: str) -> str:
    return OPTION_FLAGS.get(key, f"--reader-option {key}")


def _as_bool(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
        return value.lower() in ("true", "1", "yes")
    raise DialogFormatError(f"{_flag(key)} must be true or false, got {value!r}.")


class _Forward:
    """The ``on_problem`` of a stream started before its consumer is known:
    each problem goes to ``to`` (None: raise ``MalformedRecordError``)."""

    to: Optional[OnProblem] = None

    def __call__(self, problem: Problem) -> None:
        reporter(self.to)(problem)


class DialogCorpus:
    """A dialog corpus opened for its turn pairs (module doc). ``options``
    keep the format as given (None when guessed; ``reader`` is the one read)
    with boolean reader options given as text (``true``) made booleans.
    DialogFormatError for an unknown or unclear format, a reader option that
    format's reader does not take (or of the wrong type) and an input its
    reader refuses when started; ValueError for a bad role setting (a bad
    pairing mode is refused by ``SourceOptions`` itself).
    The input stays open until ``close`` (called on leaving a ``with`` block)."""

    def __init__(self, path, options: Optional[SourceOptions] = None):
        options = options or SourceOptions()
        self.path = Path(path)
        self.reader = reader_for(options.fmt or guess_format(self.path))
        self.options = replace(options, reader_options=self._checked_reader_options(options))
        self.role_of = self._role_of()
        self._open_streams: List[Iterator[Any]] = []  # the readers started and the passes, for close
        self._started: Optional[Tuple[_Forward, Iterator[Any]]] = self._open()

    def _checked_reader_options(self, options: SourceOptions) -> Dict[str, Any]:
        takes = self.reader.options
        unknown = [key for key in options.reader_options if key not in takes]
        if unknown:
            guessed = "" if options.fmt else " (guessed from the input; --format sets it)"
            accepted = ", ".join(_flag(k) for k in sorted(takes)) or "no reader options"
            raise DialogFormatError(
                f"{', '.join(_flag(k) for k in unknown)}: not an option of the {self.reader.name} format{guessed}; "
                f"it takes {accepted}."
            )
        checked = {}
        for key, value in options.reader_options.items():
            if isinstance(takes[key], bool):
                value = _as_bool(key, value)
            elif value is not None and not isinstance(value, str):
                raise DialogFormatError(f"{_flag(key)} must be text, got {value!r}.")
            checked[key] = value
        return checked

    def _role_of(self) -> Optional[RoleOf]:
        """The role getter of the role filter; None when it keeps every pair."""
        options = self.options
        if options.role_patterns and options.role_source != "pattern":
            raise ValueError(
                f"--role-pattern is read with --role-source pattern only (the role source is "
                f"{options.role_source!r}, so the patterns would be ignored); add --role-source pattern."
            )
        if not options.first_roles and not options.second_roles:
            return None
        speakers = None
        if options.role_source.startswith("speaker-meta:"):
            speakers = read_convokit_speakers(self.path, fields=[options.role_source.partition(":")[2]])
        return role_getter(options.role_source, patterns=options.role_patterns or None, speakers=speakers)

    def _open(self) -> Tuple[_Forward, Iterator[Any]]:
        """A reader started on the input (conversations, or a pair file's
        pairs) and the forwarder of its problems."""
        forward = _Forward()
        read = self.reader.read(self.path, on_problem=forward, **self.options.reader_options)
        self._open_streams.append(read)
        return forward, read

    def _read(self, on_problem: Optional[OnProblem]) -> Iterator[Any]:
        """What a pass reads: on the first call the reader started when the
        corpus was opened, on each later one a new reader (the input opened
        again); its malformed records go to ``on_problem``."""
        forward, read = self._started or self._open()
        self._started = None
        forward.to = on_problem
        return read

    def _pairs(self, read: Iterator[Any], on_drop: Optional[Callable[[TurnPair], None]]) -> Iterator[TurnPair]:
        if self.reader.yields_pairs:
            stream = read
        else:
            mode = self.options.pairing
            stream = (pair for conversation in read for pair in pair_conversation(conversation, mode))
        if self.role_of is None:
            return stream
        options = self.options
        return filter_roles(stream, self.role_of, first=options.first_roles or None,
                            second=options.second_roles or None, on_drop=on_drop)

    def files(self) -> List[Path]:
        """The files of the input that reading it reads (``DialogReader.files``)."""
        return self.reader.files(self.path)

    def pairs(self, on_problem: Optional[OnProblem] = None,
              on_drop: Optional[Callable[[TurnPair], None]] = None) -> Iterator[TurnPair]:
        """The corpus's turn pairs after the role filter (malformed records go
        to ``on_problem``, None: the first raises; pairs the role filter leaves
        out to ``on_drop``). The first pass (``pairs``, ``count`` or
        ``conversations``) reads with the reader started when the corpus was
        opened, each later one opens the input again."""
        read = self._read(on_problem)
        stream = self._pairs(read, on_drop)
        if stream is not read:
            self._open_streams.append(stream)
        return stream

    def conversations(self, on_problem: Optional[OnProblem] = None) -> Iterator[Conversation]:
        """The corpus's conversations as its reader yields them, before
        pairing and the role filter (malformed records go to ``on_problem``,
        None: the first raises), read as ``pairs`` reads. DialogFormatError
        for a pair file, whose rows are pairs of no conversation
        (``readers.no_dialogs``); the reader started then stays for the
        first pass of its pairs."""
        if self.reader.yields_pairs:
            raise no_dialogs(self.path)
        return self._read(on_problem)

    def count(self, limit: Optional[int] = None) -> int:
        """How many pairs ``pairs`` yields (malformed records ignored), at
        most ``limit``; the reader it read with is closed when it returns."""
        read = self._read(lambda problem: None)
        try:
            return sum(1 for _ in islice(self._pairs(read, None), limit))
        finally:
            self._open_streams.remove(read)
            read.close()

    def close(self) -> None:
        """Close the input: the reader started when the corpus was opened,
        if no pass took it, and the reader of every pass, read to its end or
        not (reading such a pass on ends it). A later pass opens the input
        again."""
        self._started = None
        streams, self._open_streams = self._open_streams, []
        with ExitStack() as closing:  # each one closed, even when closing another fails
            for stream in streams:
                closing.callback(stream.close)

    def __enter__(self) -> "DialogCorpus":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()


def read_turn_pairs(
    path,
    fmt: Optional[str] = None,
    *,
    mode: str = "consecutive",
    on_problem: Optional[OnProblem] = None,
    **options: Any,
) -> Iterator[TurnPair]:
    """The turn pairs of a dialog file of any format (guessed when ``fmt`` is
    None), streamed conversation by conversation; a pair file's rows are its
    pairs (``mode`` does not apply). ``options`` go to the format's reader.
    Closing the pairs closes the input, read to their end or not."""
    corpus = DialogCorpus(path, SourceOptions(fmt=fmt, pairing=mode, reader_options=options))
    return Stream(corpus.pairs(on_problem), corpus)


# The former name (``dialogs.Corpus``), kept importable; not spaCy's
# ``Corpus`` nor the training reader ``corpus.PairCorpus``.
Corpus = DialogCorpus
