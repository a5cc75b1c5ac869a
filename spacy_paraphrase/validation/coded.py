"""Reading the coded files of the coding page (``coding_page.py``) for
``validate score`` and ``convert coded``. Every problem is one line naming the
file and the pair: not a coded file, a pair coded twice, a word index out of
range, highlighted words on a "no", a "yes" without highlighted words in
both turns, files of different sheets."""
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from .coding import SheetError
from .coding_page import FORMAT
from .words import SIDES



@dataclass
class CodedPair:
    pair_id: str
    paraphrase: bool
    speakers: "tuple[str, str]"
    words: "tuple[List[str], List[str]]"
    highlight: "tuple[List[int], List[int]]"
    note: str = ""


@dataclass
class CodedFile:
    path: Path
    sheet: str
    coder: str
    pairs: Dict[str, CodedPair] = field(default_factory=dict)


def is_coded_file(path: Path) -> bool:
    """Whether ``path`` is read as a coded file (a .json file) rather than a CSV sheet."""
    return Path(path).suffix.lower() == ".json"


def _pair(path: Path, number: int, entry: Any) -> CodedPair:
    if not isinstance(entry, dict) or "pair_id" not in entry:
        raise SheetError(f"{path}: entry {number} of pairs is not a coded pair (no pair_id)")
    pid = str(entry["pair_id"])
    where = f"{path}: pair {pid}"
    label = entry.get("paraphrase")
    if not isinstance(label, bool):
        raise SheetError(f"{where}: paraphrase must be true or false, got {label!r}")
    speakers, words, highlight = [], [], []
    for side in SIDES:
        turn = entry.get(side)
        if not isinstance(turn, dict) or not isinstance(turn.get("words"), list) or not turn["words"]:
            raise SheetError(f"{where}: no words of the {side} turn")
        marked = turn.get("highlight") or []
        if not isinstance(marked, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in marked):
            raise SheetError(f"{where}: the {side} turn's highlight must be a list of word indices")
        bad = [i for i in marked if not 0 <= i < len(turn["words"])]
        if bad:
            raise SheetError(f"{where}: word index {bad[0]} out of range in the {side} turn "
                             f"({len(turn['words'])} words, indices 0-{len(turn['words']) - 1})")
        if len(set(marked)) < len(marked):
            raise SheetError(f"{where}: a word highlighted twice in the {side} turn")
        if marked and not label:
            raise SheetError(f"{where}: highlighted words on a 'no' (not a paraphrase)")
        if label and not marked:
            raise SheetError(f"{where}: a 'yes' without highlighted words in the {side} turn")
        speakers.append(str(turn.get("speaker") or side))
        words.append([str(w) for w in turn["words"]])
        highlight.append(sorted(marked))
    return CodedPair(pid, label, tuple(speakers), tuple(words), tuple(highlight),  # type: ignore[arg-type]
                     str(entry.get("note") or ""))


def read_coded(path: Path) -> CodedFile:
    """One coded file, checked (module doc); SheetError naming the file and pair."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except OSError as err:
        raise SheetError(f"{path}: {err.strerror}") from None
    except (UnicodeDecodeError, ValueError) as err:
        raise SheetError(f"{path}: not a coded file of the coding page (not JSON: {err})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("pairs"), list):
        raise SheetError(f"{path}: not a coded file of the coding page (no format {FORMAT!r} with pairs)")
    coder = str(data.get("coder") or "").strip()
    if not coder:
        raise SheetError(f"{path}: no coder name in the file")
    out = CodedFile(path, str(data.get("sheet") or ""), coder)
    for number, entry in enumerate(data["pairs"], 1):
        pair = _pair(path, number, entry)
        if pair.pair_id in out.pairs:
            raise SheetError(f"{path}: pair {pair.pair_id} coded twice")
        out.pairs[pair.pair_id] = pair
    if not out.pairs:
        raise SheetError(f"{path}: no coded pairs")
    return out


def read_coded_files(paths: Sequence[Path], sheet: Optional[str] = None) -> List[CodedFile]:
    """Coded files of one sheet (``sheet``: its id, when known, e.g. from the
    design); SheetError for a file of another sheet, two files of one coder,
    or a pair whose words differ between files."""
    files = [read_coded(p) for p in paths]
    expected = sheet or (files[0].sheet if files else None)
    origin = "the design" if sheet else str(files[0].path) if files else ""
    seen: Dict[str, CodedFile] = {}
    words: Dict[str, Any] = {}
    for f in files:
        if f.sheet != expected:
            first = next(iter(f.pairs))
            raise SheetError(f"{f.path}: a file of another sheet (sheet {f.sheet or 'none'}, pair {first}; "
                             f"{origin} is sheet {expected})")
        if f.coder in seen:
            raise SheetError(f"{f.path}: coder {f.coder} also coded {seen[f.coder].path} (one file per coder)")
        seen[f.coder] = f
        for pid, pair in f.pairs.items():
            if words.setdefault(pid, (pair.words, f.path))[0] != pair.words:
                raise SheetError(f"{f.path}: pair {pid} has other words than in {words[pid][1]}")
    return files
