"""The values of a dialog record's fields: ids, speakers, texts and orders read
from JSON or table cells, each checked (``RecordError`` names what is wrong),
and the JSON type names the messages use."""
import math
import re
from typing import Any, Dict

from ..table_reader import RecordError


def json_type(value: Any) -> str:
    """The JSON name of a value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def as_id(value: Any, what: str) -> str:
    """A non-empty id from a string or an integer."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise RecordError(f"{what} must be a string, got {json_type(value)}")
    if not value.strip():
        raise RecordError(f"{what} is empty")
    return value


_INTEGER = re.compile(r"-?[0-9]+")


class IdTypes:
    """The JSON type under which each id (by its string) was first met: an id
    given as a number in one record and as a string in another (``1`` and
    ``"1"``) names two things, which must never be merged into one."""

    def __init__(self, what: str):
        self.what = what
        self._types: Dict[str, str] = {}

    def check(self, value: Any, key: str) -> None:
        """RecordError when ``key`` (``as_id(value)``) was met as another JSON type
        (only ids that read as integers can clash, and only those are kept)."""
        if not _INTEGER.fullmatch(key):
            return
        kind = json_type(value)
        first = self._types.setdefault(key, kind)
        if first != kind:
            raise RecordError(
                f"{self.what} {value!r} is a {kind} here but a {first} in an earlier record: ids of "
                "different JSON types are different ids (give them one type)"
            )


def as_speaker(value: Any, what: str = "speaker") -> str:
    """A speaker name: any string (kept verbatim) or an integer."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise RecordError(f"{what} must be a string, got {json_type(value)}")
    return value


def as_text(value: Any, what: str = "text") -> str:
    """A text: a string, kept verbatim (empty and whitespace-only texts too)."""
    if not isinstance(value, str):
        raise RecordError(f"{what} must be a string, got {json_type(value)}")
    return value


def as_order(value: Any, what: str) -> float:
    """A finite number, or a string holding one."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise RecordError(f"{what} must be a number, got {json_type(value)}")
    try:
        number = float(value)
    except ValueError:
        raise RecordError(f"{what} must be a number, got {value!r:.40}") from None
    if not math.isfinite(number):
        raise RecordError(f"{what} must be a finite number, got {value!r:.40}")
    return number
