"""The fields a report groups by (``report --by FIELD``, ``--by-time
FIELD:month|year``): every record's values by name (docs/report.md, "Fields").

- ``conversation_id``, ``first.speaker``, ``second.speaker``;
- ``meta.KEY``: the pair's own meta (ready-made pairs with extra columns);
- ConvoKit input: ``first.meta.KEY`` / ``second.meta.KEY`` (meta of the
  turn's first utterance), ``first.speaker.KEY`` / ``second.speaker.KEY``
  (the speaker's meta, e.g. a role), ``conversation.KEY`` (conversation meta),
  ``first.timestamp`` / ``second.timestamp``; the same from any corpus
  read with ``--dialogs`` (report/dialogs.py);
- ``first.role`` / ``second.role``: with ``--role-pattern``, the role of
  the turn's speaker name.
"""
import datetime
import math
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..annotate.record_format import CONVERSATION_ID, FIRST, META, SECOND, SIDES, TURN_FIELDS
from .records import Records

TIME_UNITS = ("month", "year")


class FieldError(ValueError):
    """A --by or --by-time field no record has, or a time that cannot be read."""


def _scalar(value: Any) -> Optional[str]:
    if value is None or isinstance(value, (dict, list)):
        return None if value is None else str(value)
    if isinstance(value, float) and math.isnan(value):
        return None
    return str(value)


RoleOf = Callable[[Optional[str]], Optional[str]]


def record_fields(record: Dict[str, Any], data: Records, role_of: Optional[RoleOf] = None) -> Dict[str, Any]:
    """Every field of one record (module doc), raw values; ``role_of``:
    speaker name -> role (report/dialogs.py ``speaker_roles``). The fields
    keep the names docs/report.md gives them, whatever the record's keys."""
    out: Dict[str, Any] = {"conversation_id": record.get(CONVERSATION_ID.key)}
    for key, value in (record.get(META.key) or {}).items():
        out[f"meta.{key}"] = value
    conversation = data.conversation_meta.get(str(record.get(CONVERSATION_ID.key)), {})
    for key, value in conversation.items():
        out[f"conversation.{key}"] = value
    for side, turn_field in zip(SIDES, (FIRST, SECOND)):
        turn = record.get(turn_field.key) or {}
        speaker = turn.get(TURN_FIELDS.speaker)
        out[f"{side}.speaker"] = speaker
        if role_of is not None:
            out[f"{side}.role"] = role_of(speaker)
        for key, value in data.speaker_meta.get(str(speaker), {}).items():
            out[f"{side}.speaker.{key}"] = value
        ids = turn.get(TURN_FIELDS.utterance_ids) or []
        if ids:
            for key, value in data.utterance_meta.get(str(ids[0]), {}).items():
                out[f"{side}.meta.{key}"] = value
            if str(ids[0]) in data.utterance_time:
                out[f"{side}.timestamp"] = data.utterance_time[str(ids[0])]
    return out


def all_fields(data: Records, role_of: Optional[RoleOf] = None) -> List[Dict[str, Any]]:
    return [record_fields(r, data, role_of) for r in data.records]


JOINED = ("conversation.", "first.meta.", "second.meta.", "first.timestamp", "second.timestamp", "first.speaker.",
          "second.speaker.")


def check_field(name: str, fields: Sequence[Dict[str, Any]]) -> None:
    """FieldError naming the fields there are when no record has ``name``
    (and where a meta or role field comes from)."""
    if any(f.get(name) is not None for f in fields):
        return
    known = sorted({k for f in fields for k, v in f.items() if v is not None})
    hint = ""
    if name.startswith(JOINED):
        hint = ("; conversation, utterance and speaker meta come from a ConvoKit output of annotate or from "
                "--dialogs CORPUS (the corpus annotate read; speaker meta only from a ConvoKit corpus)")
    elif name in ("first.role", "second.role") and not any(name in f for f in fields):
        hint = "; roles come from --role-pattern ROLE=REGEX (matched on the speaker names)"
    raise FieldError(f"no record has the field {name!r}; fields of these records: {', '.join(known)}{hint}")


def group_values(name: str, fields: Sequence[Dict[str, Any]]) -> List[Optional[str]]:
    """The field's value of every record as text (None: the record has none)."""
    check_field(name, fields)
    return [_scalar(f.get(name)) for f in fields]


def parse_time_option(option: str) -> Tuple[str, str]:
    """``FIELD:month|year`` -> (field, unit)."""
    name, _, unit = option.rpartition(":")
    if not name or unit not in TIME_UNITS:
        raise FieldError(f"--by-time {option!r}: expected FIELD:month or FIELD:year")
    return name, unit


def to_date(value: Any) -> Optional[datetime.date]:
    """A date from a Unix timestamp (seconds) or an ISO 8601 date / datetime
    text (``2019-03-01``, ``2019-03-01T10:00:00``, ``2019-03``, ``2019``);
    None when it is neither."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            return None
        return datetime.datetime.fromtimestamp(value, datetime.timezone.utc).date()
    text = str(value).strip()
    for size, fmt in ((4, "%Y"), (7, "%Y-%m")):
        if len(text) == size:
            try:
                return datetime.datetime.strptime(text, fmt).date()
            except ValueError:
                return None
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).date()
    except ValueError:
        return None


def time_values(option: str, fields: Sequence[Dict[str, Any]]) -> Tuple[str, List[Optional[str]], int]:
    """(field, each record's period ``YYYY`` or ``YYYY-MM`` or None, records
    that have the field but no readable date). FieldError when no record has
    a readable date in the field."""
    name, unit = parse_time_option(option)
    check_field(name, fields)
    periods: List[Optional[str]] = []
    unreadable = 0
    for f in fields:
        value = f.get(name)
        date = to_date(value)
        if date is None and value is not None:
            unreadable += 1
        periods.append(None if date is None else (f"{date.year:04d}" if unit == "year" else f"{date:%Y-%m}"))
    if all(p is None for p in periods):
        example = next(f.get(name) for f in fields if f.get(name) is not None)
        raise FieldError(f"--by-time {option}: no value of {name!r} is a date (e.g. {example!r}); "
                         "expected a Unix timestamp or an ISO 8601 date")
    return name, periods, unreadable
