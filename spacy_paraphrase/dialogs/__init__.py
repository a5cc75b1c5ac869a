"""Dialog corpora to turn pairs: streaming readers for ConvoKit, MediaSum-style,
chat, turn-table and pair files, turn building and pairing, and a role filter.
Formats, pairing rules and ``pair_id``: docs/dialog-formats.md.

Exported: what docs/dialog-formats.md shows (``read_turn_pairs`` and what it
takes and yields, ``DialogCorpus`` (``Corpus``: its former name), the role filter, the problem reports); the rest
is imported from its module (readers.py, convokit.py, pairing.py, turns.py,
roles.py, tables.py, streaming.py, fields.py)."""
from .convokit import read_convokit_speakers
from .pairing import Corpus, DialogCorpus, SourceOptions, read_turn_pairs
from .readers import FORMATS, guess_format, read_dialogs
from .roles import filter_roles, role_getter
from .turns import (
    Conversation,
    DialogFormatError,
    MalformedRecordError,
    Problem,
    ProblemCollector,
    Turn,
    TurnPair,
    Utterance,
)

__all__ = [
    "FORMATS",
    "Conversation",
    "Corpus",
    "DialogCorpus",
    "DialogFormatError",
    "MalformedRecordError",
    "Problem",
    "ProblemCollector",
    "SourceOptions",
    "Turn",
    "TurnPair",
    "Utterance",
    "filter_roles",
    "guess_format",
    "read_convokit_speakers",
    "read_dialogs",
    "read_turn_pairs",
    "role_getter",
]
