"""Reading one sampled LLM answer in the ContextDeP prompt's format::

    Let's think step by step. ... Therefore, the answer is yes.
    Verbatim Quote Guest: "first quote" "second quote"
    Verbatim Quote Host: "a quote"
    Classification: Yes.

Rules (``parse_answer``):

- The answer is read only up to the end of the first ``Classification:``
  line: a base model that goes on writing further examples does not change
  it. ``Classification: Yes`` / ``No`` (case, ``*``/quotes around it and a
  trailing period ignored) is the answer. Without such a line, the last
  ``the answer is yes|no`` of the explanation is used and the problem
  ``no_classification`` is recorded; without either (or with any other
  word after ``Classification:``), the answer is ``None``: *unparsed*, never
  read as "no".
- Quote lines: the last ``Verbatim Quote Guest:`` / ``Verbatim Quote Host:``
  before the classification. The quotes are the strings in double quotes
  (curly quotes straightened). ``None``, ``None.``, ``N/A``, ``-`` or nothing
  means no quote. A line with text but no double quotes gives that text as
  one quote (problem ``unquoted_guest`` / ``unquoted_host``). A missing line
  is the problem ``missing_guest`` / ``missing_host`` (no quotes for that
  side).
"""
import dataclasses
import re
from typing import List, Optional, Tuple

_CLASSIFICATION = re.compile(r"classification\s*:\s*(?P<value>[^\n]*)", re.IGNORECASE)
_VALUE = re.compile(r"^[\s*\"'`]*(?P<word>[a-z]+)[\s*\"'`.!]*", re.IGNORECASE)
_ANSWER_IS = re.compile(r"the answer is\s*[:\s*\"'`]*(?P<word>yes|no)\b", re.IGNORECASE)
_QUOTED = re.compile(r'"([^"]*)"')
_NONE = {"", "none", "none.", "n/a", "na", "-", "nothing", "no quote", "no quote."}
_CURLY = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u00ab": '"', "\u00bb": '"'})


@dataclasses.dataclass
class ParsedAnswer:
    """One sample: ``answer`` (True = paraphrase, False = not, None = could
    not be parsed), the quotes for the guest (first) and host (second) turn,
    and the problems met (module doc)."""

    answer: Optional[bool]
    guest_quotes: List[str]
    host_quotes: List[str]
    problems: List[str]

    @property
    def parsed(self) -> bool:
        return self.answer is not None


def _label_pattern(labels: Tuple[str, str]) -> str:
    return "|".join(re.escape(x) for x in labels)


def _quotes(rest: str, side: str, problems: List[str], labels: Tuple[str, str]) -> List[str]:
    rest = rest.translate(_CURLY)
    # "Verbatim Quote Guest: ... Verbatim Quote Host: ..." on one line: cut at the next label
    cut = re.search(rf"verbatim\s+quotes?\s+({_label_pattern(labels)})\s*:|classification\s*:", rest, re.IGNORECASE)
    if cut:
        rest = rest[: cut.start()]
    found = [q.strip() for q in _QUOTED.findall(rest)]
    found = [q for q in found if q.strip().lower() not in _NONE]
    if found:
        return found
    text = _QUOTED.sub(" ", rest).strip(" \t\"")
    if text.lower() in _NONE or (not text.strip(" .,;") and '"' in rest):
        return []  # None., or only quoted "None"s / empty quotes
    problems.append(f"unquoted_{side}")
    return [text]


def parse_answer(text: str, labels: Tuple[str, str] = ("Guest", "Host")) -> ParsedAnswer:
    """Parse one sampled answer (module doc); ``labels``: the speaker labels
    of the quote lines (first turn, second turn)."""
    if not isinstance(text, str):
        return ParsedAnswer(None, [], [], [f"not_text:{type(text).__name__}"])
    problems: List[str] = []
    text = text.replace("\r\n", "\n")
    answer: Optional[bool] = None
    match = _CLASSIFICATION.search(text)
    body = text
    if match:
        body = text[: match.start()]
        value = _VALUE.match(match.group("value"))
        word = value.group("word").lower() if value else ""
        if word in ("yes", "no"):
            answer = word == "yes"
        else:
            problems.append("bad_classification")
    else:
        said = _ANSWER_IS.findall(text)
        if said:
            answer = said[-1].lower() == "yes"
            problems.append("no_classification")
        else:
            problems.append("no_answer")
    lines: dict = {}
    quote_line = re.compile(
        rf"verbatim\s+quotes?\s+(?P<side>{_label_pattern(labels)})\s*:(?P<rest>[^\n]*)", re.IGNORECASE)
    for m in quote_line.finditer(body):
        side = "guest" if m.group("side").lower() == labels[0].lower() else "host"
        lines[side] = m.group("rest")
    quotes: Tuple[List[str], List[str]] = ([], [])
    for i, side in enumerate(("guest", "host")):
        if side in lines:
            quotes[i].extend(_quotes(lines[side], side, problems, labels))
        elif answer:
            problems.append(f"missing_{side}")
    return ParsedAnswer(answer, quotes[0], quotes[1], problems)
