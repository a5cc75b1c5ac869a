"""Dialog corpora to turn pairs: streaming readers for ConvoKit, MediaSum-style,
chat, turn-table and pair files, turn building and pairing, and a role filter.
Formats, pairing rules and ``pair_id``: docs/dialog-formats.md."""
from .pairing import MODES, build_turns, pair_consecutive, pair_conversation, pair_replies, read_turn_pairs
from .readers import (
    FORMATS,
    guess_format,
    read_chat,
    read_convokit,
    read_convokit_speakers,
    read_dialogs,
    read_mediasum,
    unify_speaker_names,
)
from .turns import (
    Conversation,
    DialogFormatError,
    MalformedRecordError,
    Problem,
    ProblemCollector,
    Turn,
    TurnPair,
    Utterance,
    UtteranceSpan,
)
from .roles import filter_roles, role_getter, turn_role
from .tables import PAIR_COLUMNS, find_pair_columns, read_pair_file, read_turn_table

__all__ = [
    "FORMATS",
    "MODES",
    "PAIR_COLUMNS",
    "Conversation",
    "DialogFormatError",
    "MalformedRecordError",
    "Problem",
    "ProblemCollector",
    "Turn",
    "TurnPair",
    "Utterance",
    "UtteranceSpan",
    "build_turns",
    "filter_roles",
    "find_pair_columns",
    "guess_format",
    "pair_consecutive",
    "pair_conversation",
    "pair_replies",
    "read_chat",
    "read_convokit",
    "read_convokit_speakers",
    "read_dialogs",
    "read_mediasum",
    "read_pair_file",
    "read_turn_pairs",
    "read_turn_table",
    "role_getter",
    "turn_role",
    "unify_speaker_names",
]
