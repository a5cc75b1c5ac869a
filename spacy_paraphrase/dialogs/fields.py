"""The values of a dialog record's fields: the record as an object, a field by
name, ids, speakers, texts and orders read from JSON or table cells, each
checked (``InputRowError`` names what is wrong), and the JSON type names the
messages use."""
import math
import re
from typing import Any, Dict, Mapping, Optional

from ..table_reader import InputRowError


_JSON_TYPES = ((bool, "boolean"), ((int, float), "number"), (str, "string"), (list, "list"), (dict, "object"))


def json_type(value: Any) -> str:
    """The JSON name of a value's type, for messages."""
    if value is None:
        return "null"
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), type(value).__name__)


def field(record: Mapping[str, Any], *names: str, what: Optional[str] = None) -> Any:
    """The value of the first of ``names`` in ``record``; InputRowError ``missing
    field`` (naming ``what``, by default the first name) when none is there."""
    for name in names:
        if name in record:
            return record[name]
    raise InputRowError(f"missing field {what or names[0]!r}")


def as_object(record: Any) -> Dict[str, Any]:
    """A record that must be a JSON object."""
    if not isinstance(record, dict):
        raise InputRowError(f"expected a JSON object, got {json_type(record)}")
    return record


def as_id(value: Any, what: str) -> str:
    """A non-empty id from a string or an integer (as ``as_speaker``)."""
    value = as_speaker(value, what)
    if not value.strip():
        raise InputRowError(f"{what} is empty")
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
        """InputRowError when ``key`` (``as_id(value)``) was met as another JSON type
        (only ids that read as integers can clash, and only those are kept)."""
        if not _INTEGER.fullmatch(key):
            return
        kind = json_type(value)
        first = self._types.setdefault(key, kind)
        if first != kind:
            raise InputRowError(
                f"{self.what} {value!r} is a {kind} here but a {first} in an earlier record: ids of "
                "different JSON types are different ids (give them one type)"
            )


def as_speaker(value: Any, what: str = "speaker") -> str:
    """A speaker name: any string (kept verbatim) or an integer."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else as_text(value, what)


def as_text(value: Any, what: str = "text") -> str:
    """A text: a string, kept verbatim (empty and whitespace-only texts too)."""
    if not isinstance(value, str):
        raise InputRowError(f"{what} must be a string, got {json_type(value)}")
    return value


def as_order(value: Any, what: str) -> float:
    """A finite number, or a string holding one."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InputRowError(f"{what} must be a number, got {json_type(value)}")
    try:
        number = float(value)
    except ValueError:
        raise InputRowError(f"{what} must be a number, got {value!r:.40}") from None
    if not math.isfinite(number):
        raise InputRowError(f"{what} must be a finite number, got {value!r:.40}")
    return number
