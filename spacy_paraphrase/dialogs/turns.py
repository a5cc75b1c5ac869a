"""What the dialog readers yield and the pairing builds: utterances,
conversations, turns, turn pairs, and the problems found on the way.

The formats, the pairing rules and the ``pair_id`` are described in
``docs/dialog-formats.md``; the annotate record built from a ``TurnPair`` in
the README ("What the component writes"). A ``TurnPair`` has one JSON form
(``to_json`` / ``from_json``): how annotate stages it for Ray and how its
records keep the turns.
"""
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

SEPARATOR = " "  # between the utterance texts of a merged turn


class TurnKeys(NamedTuple):
    speaker: str
    utterance_ids: str
    text: str
    offsets: str


class PairKeys(NamedTuple):
    pair_id: str
    conversation_id: str
    first: str
    second: str
    meta: str


# The keys of a turn's JSON form (``Turn.to_json``: the keys inside an annotate
# record's ``first`` and ``second``) and of a pair's (``TurnPair.to_json``: the
# record's first keys, ``record_format.RECORD_FIELDS``), each read by its name
# here (``TURN_KEYS.text``, never ``"text"``).
TURN_KEYS = TurnKeys("speaker", "utterance_ids", "text", "offsets")
PAIR_KEYS = PairKeys("pair_id", "conversation_id", "first", "second", "meta")


class DialogFormatError(ValueError):
    """A file cannot be read at all (missing, unknown format, missing columns)."""


@dataclass(frozen=True)
class Problem:
    """A malformed record: the file, the line where the record starts, why."""

    path: str
    line: Optional[int]
    reason: str

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}, line {self.line}"
        return f"{where}: {self.reason}"


class MalformedRecordError(DialogFormatError):
    """Raised for a Problem when the caller passed no ``on_problem`` callback."""

    def __init__(self, problem: Problem):
        self.problem = problem
        super().__init__(str(problem))


OnProblem = Callable[[Problem], None]


def _raise(problem: Problem) -> None:
    raise MalformedRecordError(problem)


def reporter(on_problem: Optional[OnProblem]) -> OnProblem:
    """The callback itself, or (for None) one that raises MalformedRecordError."""
    return _raise if on_problem is None else on_problem


class ProblemCollector:
    """An ``on_problem`` callback that counts every problem and keeps the
    first ``keep`` of them (so memory stays bounded on a huge corpus)."""

    def __init__(self, keep: int = 1000):
        self.keep = keep
        self.count = 0
        self.problems: List[Problem] = []

    def __call__(self, problem: Problem) -> None:
        self.count += 1
        if len(self.problems) < self.keep:
            self.problems.append(problem)

    def __len__(self) -> int:
        return self.count


@dataclass(frozen=True)
class Utterance:
    """One utterance as read: ``text`` verbatim (not stripped; may be empty)."""

    id: str
    conversation_id: str
    speaker: Optional[str]
    text: str
    reply_to: Optional[str] = None
    timestamp: Any = None
    meta: Dict[str, Any] = field(default_factory=dict)
    path: Optional[str] = None
    line: Optional[int] = None


@dataclass
class Conversation:
    """A conversation id and its utterances in conversation order."""

    id: str
    utterances: List[Utterance]
    meta: Dict[str, Any] = field(default_factory=dict)
    path: Optional[str] = None
    line: Optional[int] = None


class UtteranceSpan(NamedTuple):
    """Part of a turn span inside one utterance: offsets into its own text."""

    utterance_id: str
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Turn:
    """Consecutive utterances of one speaker; ``text`` is their texts joined by
    one space, ``offsets[i]`` the (start, end) of utterance i inside ``text``."""

    speaker: Optional[str]
    text: str
    utterances: Tuple[Utterance, ...]
    offsets: Tuple[Tuple[int, int], ...]

    @classmethod
    def of(cls, utterances: Sequence[Utterance]) -> "Turn":
        """The turn of these utterances (the speaker is the first one's)."""
        if not utterances:
            raise ValueError("a turn needs at least one utterance")
        offsets = []
        start = 0
        for utt in utterances:
            offsets.append((start, start + len(utt.text)))
            start += len(utt.text) + len(SEPARATOR)
        text = SEPARATOR.join(utt.text for utt in utterances)
        return cls(utterances[0].speaker, text, tuple(utterances), tuple(offsets))

    @property
    def utterance_ids(self) -> List[str]:
        return [utt.id for utt in self.utterances]

    def to_json(self) -> Dict[str, Any]:
        """``{"speaker", "utterance_ids", "text", "offsets"}`` (``offsets[i]`` =
        ``[start, end]`` of utterance ``i`` in ``text``), as in the annotate record."""
        keys = TURN_KEYS
        return {keys.speaker: self.speaker, keys.utterance_ids: self.utterance_ids, keys.text: self.text,
                keys.offsets: [[start, end] for start, end in self.offsets]}

    @classmethod
    def from_json(cls, turn: Mapping[str, Any], conversation_id: str = "") -> "Turn":
        """The turn of ``to_json``'s form (a record's turn too): utterance texts
        cut from the text at ``offsets`` (a one-utterance turn may omit them:
        the whole text). ValueError for offsets that do not fit the text or the
        utterance ids."""
        keys = TURN_KEYS
        text, ids, given = turn.get(keys.text), turn.get(keys.utterance_ids), turn.get(keys.offsets)
        if not isinstance(text, str) or not isinstance(ids, list) or not ids:
            raise ValueError(f"a turn needs a {keys.text!r} string and a non-empty {keys.utterance_ids!r} list")
        if given is None and len(ids) == 1:
            given = [[0, len(text)]]
        if not isinstance(given, list) or len(given) != len(ids):
            n = len(given) if isinstance(given, list) else "no"
            raise ValueError(f"a turn has {len(ids)} utterance ids but {n} offsets (an annotate record keeps "
                             "the offsets of a merged turn's utterances)")
        end = 0
        for bounds in given:
            if (not isinstance(bounds, (list, tuple)) or len(bounds) != 2
                    or not all(isinstance(x, int) and not isinstance(x, bool) for x in bounds)
                    or not end <= bounds[0] <= bounds[1] <= len(text)):
                raise ValueError(f"offsets {given!r} are not ordered [start, end] ranges of the turn's "
                                 f"{len(text)} characters")
            end = bounds[1]
        speaker = turn.get(keys.speaker)
        utterances = tuple(Utterance(str(utt_id), conversation_id, speaker, text[start:end])
                           for utt_id, (start, end) in zip(ids, given))
        return cls(speaker, text, utterances, tuple((start, end) for start, end in given))

    def split_span(self, start: int, end: int) -> List[UtteranceSpan]:
        """The character span ``[start, end)`` of ``text`` as one span per
        utterance it touches, with offsets into that utterance's own text
        (``utterance.text[s:e] == text[start:end]`` piecewise); the separators
        between utterances are left out, empty pieces dropped."""
        if not 0 <= start <= end <= len(self.text):
            raise ValueError(f"span [{start}, {end}) is outside the turn text (length {len(self.text)})")
        starts = [s for s, _ in self.offsets]
        pieces = []
        for i in range(max(bisect_right(starts, start) - 1, 0), len(self.offsets)):
            u_start, u_end = self.offsets[i]
            if u_start >= end:
                break
            lo, hi = max(start, u_start), min(end, u_end)
            if lo < hi:
                text = self.utterances[i].text[lo - u_start : hi - u_start]
                pieces.append(UtteranceSpan(self.utterances[i].id, lo - u_start, hi - u_start, text))
        return pieces


@dataclass(frozen=True)
class TurnPair:
    """Two turns of one conversation: ``second`` answers ``first``. ``meta``
    holds the extra columns of a ready-made pair file (else empty)."""

    pair_id: str
    conversation_id: str
    first: Turn
    second: Turn
    meta: Dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> Dict[str, Any]:
        """``pair_id``, ``conversation_id``, ``first`` / ``second``
        (``Turn.to_json``) and ``meta`` when the pair has any: plain JSON."""
        keys = PAIR_KEYS
        out: Dict[str, Any] = {keys.pair_id: self.pair_id, keys.conversation_id: self.conversation_id,
                               keys.first: self.first.to_json(), keys.second: self.second.to_json()}
        if self.meta:
            out[keys.meta] = dict(self.meta)
        return out

    @classmethod
    def from_json(cls, pair: Mapping[str, Any]) -> "TurnPair":
        """The pair of ``to_json``'s form, or of an annotate record (its
        results left out). ValueError for a malformed one."""
        keys = PAIR_KEYS
        conversation_id = "" if pair.get(keys.conversation_id) is None else str(pair[keys.conversation_id])
        turns = []
        for side in (keys.first, keys.second):
            if not isinstance(pair.get(side), Mapping):
                raise ValueError(f"{side!r} must be an object")
            try:
                turns.append(Turn.from_json(pair[side], conversation_id))
            except ValueError as err:
                raise ValueError(f"the {side} turn: {err}") from None
        if pair.get(keys.pair_id) is None:
            raise ValueError(f"{keys.pair_id!r} is missing")
        return cls(str(pair[keys.pair_id]), conversation_id, turns[0], turns[1], dict(pair.get(keys.meta) or {}))
