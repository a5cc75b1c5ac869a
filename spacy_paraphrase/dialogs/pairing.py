"""Turns and turn pairs from conversations (docs/dialog-formats.md).

``consecutive`` (the way ContextDeP was built): a run of consecutive
utterances of one speaker is one turn, and each turn is paired with the next
one; ``pair_id`` is the id of the first turn's first utterance (for MediaSum
ids, ContextDeP's QID). ``reply-to`` (threaded data): each utterance is paired
with the utterance it replies to, without merging; ``pair_id`` is
``{parent id}>{reply id}``. Pairs never join two conversations, and both
turns of a pair always have different speakers.
"""
import inspect
from typing import Any, Dict, Iterable, Iterator, List, Optional

from .readers import guess_format, read_chat, read_convokit, read_dialogs, read_mediasum
from .turns import Conversation, OnProblem, Turn, TurnPair, Utterance
from .tables import read_pair_file, read_turn_table

MODES = ("consecutive", "reply-to")


def build_turns(utterances: Iterable[Utterance]) -> List[Turn]:
    """Merge each run of consecutive utterances with the same speaker into one turn."""
    turns: List[Turn] = []
    run: List[Utterance] = []
    for utterance in utterances:
        if run and utterance.speaker != run[-1].speaker:
            turns.append(Turn.of(run))
            run = []
        run.append(utterance)
    if run:
        turns.append(Turn.of(run))
    return turns


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
    raise ValueError(f"Unknown pairing mode {mode!r}; choose one of {', '.join(MODES)}.")


def reader_parameters(fmt: str) -> Dict[str, Any]:
    """The options the reader of format ``fmt`` takes (name -> default),
    ``on_problem`` aside."""
    readers = {"convokit": read_convokit, "mediasum": read_mediasum, "chat": read_chat,
               "turns": read_turn_table, "pairs": read_pair_file}
    parameters = inspect.signature(readers[fmt]).parameters.values()
    return {p.name: p.default for p in parameters if p.kind is p.KEYWORD_ONLY and p.name != "on_problem"}


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
    pairs (``mode`` does not apply). ``options`` go to the format's reader."""
    if mode not in MODES:
        raise ValueError(f"Unknown pairing mode {mode!r}; choose one of {', '.join(MODES)}.")
    fmt = fmt or guess_format(path)
    if fmt == "pairs":
        return read_pair_file(path, on_problem=on_problem, **options)
    conversations = read_dialogs(path, fmt, on_problem=on_problem, **options)
    return (pair for conversation in conversations for pair in pair_conversation(conversation, mode))
