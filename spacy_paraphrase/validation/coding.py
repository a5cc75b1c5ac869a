"""Reading coded sheets (``validate score``): one CSV per coder (the coder is
the file's name), the columns of ``validate sheet`` (``pair_id`` and
``label`` are the ones read). A label is 1 / 0, yes / no, y / n, true /
false or paraphrase / not paraphrase (any case). A sheet may hold fewer
pairs than were drawn (a coder who coded part of them) but every row it
holds must carry a label. Rows are numbered as a spreadsheet shows them (the
header is row 1)."""
import csv
from pathlib import Path
from typing import Dict, List, Sequence

YES = {"1", "yes", "y", "true", "paraphrase", "p"}
NO = {"0", "no", "n", "false", "not paraphrase", "not", "none"}
MAX_ROWS_NAMED = 10


class SheetError(ValueError):
    """A coded sheet that cannot be scored (names the sheet and rows)."""


def _rows(numbers: List[int]) -> str:
    shown = ", ".join(map(str, numbers[:MAX_ROWS_NAMED]))
    return shown + (f" and {len(numbers) - MAX_ROWS_NAMED} more" if len(numbers) > MAX_ROWS_NAMED else "")


def parse_label(text: str):
    value = (text or "").strip().lower()
    if value in YES:
        return 1
    if value in NO:
        return 0
    return None


def read_sheet(path: Path, known_ids: Sequence[str]) -> Dict[str, int]:
    """pair id -> label (1/0) of one coded sheet; SheetError naming every
    row with a missing or unknown label, a pair id twice, or a pair id that
    is not in the records."""
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8-sig") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames or []
            rows = list(reader)
    except OSError as err:
        raise SheetError(f"{path}: {err.strerror}") from None
    except (UnicodeDecodeError, csv.Error) as err:
        raise SheetError(f"{path}: not a CSV coding sheet ({err})") from None
    missing_columns = [c for c in ("pair_id", "label") if c not in header]
    if missing_columns:
        raise SheetError(f"{path}: no {' or '.join(missing_columns)} column (header: {', '.join(header)})")
    known = set(known_ids)
    labels: Dict[str, int] = {}
    first_row: Dict[str, int] = {}
    problems: Dict[str, List[int]] = {"missing label": [], "unknown label": [], "pair id twice": [],
                                      "pair id not in the records": []}
    unknown_values: List[str] = []
    for number, row in enumerate(rows, 2):
        pair_id = (row.get("pair_id") or "").strip()
        raw = row.get("label") or ""
        if pair_id in first_row:
            problems["pair id twice"].append(number)
            continue
        first_row[pair_id] = number
        if pair_id not in known:
            problems["pair id not in the records"].append(number)
            continue
        label = parse_label(raw)
        if not raw.strip():
            problems["missing label"].append(number)
        elif label is None:
            problems["unknown label"].append(number)
            unknown_values.append(raw.strip())
        else:
            labels[pair_id] = label
    found = [f"{kind} in rows {_rows(rows_)}" for kind, rows_ in problems.items() if rows_]
    if found:
        extra = f" (e.g. {unknown_values[0]!r}; use 1/0, yes/no)" if unknown_values else ""
        raise SheetError(f"{path}: " + "; ".join(found) + extra)
    if not labels:
        raise SheetError(f"{path}: no coded rows")
    return labels


def coder_names(paths: Sequence[Path]) -> List[str]:
    """Each sheet's file name without its extension (the parent folder too
    when two sheets share a name)."""
    names = [Path(p).stem for p in paths]
    if len(set(names)) < len(names):
        names = [f"{Path(p).parent.name}/{Path(p).stem}" for p in paths]
    if len(set(names)) < len(names):
        raise SheetError("two coded sheets with the same name: " + ", ".join(map(str, paths)))
    return names
