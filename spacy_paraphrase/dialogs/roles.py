"""Speaker roles and the role filter on turn pairs (docs/dialog-formats.md).

A role getter maps an utterance to a role name (or None); a turn's role is
its first utterance's. Role sources:

``speaker``
    the speaker name itself (e.g. chat roles ``user`` / ``assistant``);
``pattern``
    the first role whose regular expression matches the speaker name
    (``re.search``, case-insensitive), e.g. ``{"host": r"\\bHOST\\b|TAPPER"}``;
``meta:FIELD``
    the utterance's ``meta[FIELD]`` (a turn-table column, a ConvoKit
    utterance meta field);
``speaker-meta:FIELD``
    ``speakers[speaker][FIELD]``, e.g. from ``read_convokit_speakers``.

Meta values become role names as strings (booleans as ``true`` / ``false``);
missing values, null, lists and objects give no role. Roles are compared
case-insensitively.
"""
import re
from typing import Any, Callable, Collection, Iterable, Iterator, Mapping, Optional, Union

from .turns import Turn, TurnPair, Utterance

RoleOf = Callable[[Utterance], Optional[str]]
Roles = Union[str, Collection[str], None]


def _role_name(value: Any) -> Optional[str]:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    return None


def role_getter(
    role_source: str = "speaker",
    *,
    patterns: Optional[Mapping[str, str]] = None,
    speakers: Optional[Mapping[str, Mapping[str, Any]]] = None,
) -> RoleOf:
    """A role getter for ``role_source`` (see the module doc)."""
    if role_source == "speaker":
        return lambda utterance: utterance.speaker
    if role_source == "pattern":
        if not patterns:
            raise ValueError("role source 'pattern' needs patterns: {role: regular expression}")
        compiled = []
        for role, pattern in patterns.items():
            try:
                compiled.append((role, re.compile(pattern, re.IGNORECASE)))
            except re.error as err:
                raise ValueError(f"role {role!r}: bad regular expression {pattern!r}: {err}") from None

        def by_pattern(utterance: Utterance) -> Optional[str]:
            name = utterance.speaker or ""
            return next((role for role, regex in compiled if regex.search(name)), None)

        return by_pattern
    kind, _, name = role_source.partition(":")
    if kind == "meta" and name:
        return lambda utterance: _role_name(utterance.meta.get(name))
    if kind == "speaker-meta" and name:
        if speakers is None:
            raise ValueError(
                f"role source {role_source!r} needs speakers (speaker -> meta), e.g. read_convokit_speakers"
            )
        return lambda utterance: _role_name(speakers.get(utterance.speaker or "", {}).get(name))
    raise ValueError(
        f"Unknown role source {role_source!r}; use 'speaker', 'pattern', 'meta:FIELD' or 'speaker-meta:FIELD'."
    )


def _accepts(roles: Roles, role_of: RoleOf) -> Callable[[Turn], bool]:
    """Whether a turn's role (its first utterance's) is one of ``roles`` (None: any turn)."""
    if roles is None:
        return lambda turn: True
    allowed = frozenset(role.casefold() for role in ([roles] if isinstance(roles, str) else roles))

    def accepts(turn: Turn) -> bool:
        role = role_of(turn.utterances[0])
        return role is not None and role.casefold() in allowed

    return accepts


def filter_roles(
    pairs: Iterable[TurnPair], role_of: RoleOf, *, first: Roles = None, second: Roles = None,
    on_drop: Optional[Callable[[TurnPair], None]] = None,
) -> Iterator[TurnPair]:
    """The pairs whose first / second turn has one of the given roles (a role
    or a collection of roles; None accepts any turn, even one without role).
    ``on_drop`` is called with each pair left out (to count them)."""
    first_accepts, second_accepts = _accepts(first, role_of), _accepts(second, role_of)
    for pair in pairs:
        if first_accepts(pair.first) and second_accepts(pair.second):
            yield pair
        elif on_drop is not None:
            on_drop(pair)
