"""``validate sheet``: draw pairs for human coding and write the coding sheet
(CSV: both turns, blank ``label`` / ``highlight`` / ``note`` columns, the
model's answer hidden), an HTML view of the same pairs for coders, the coding
page (``SHEET.coding.html``: coders answer and highlight words in the
browser and export a coded file; ``coding_page.py``), and the
sample's design (each pair's stratum and the strata's sizes in the corpus,
for weighting back). The stratum names give the model's decisions, so the
design never goes into the sheet's folder (the coders' copy): by default it
goes beside the records (``RECORDS_DIR/SHEET.design.json``), which hold the
model's answers anyway.

Strata (``--stratify``): ``margin`` (default) = the model's decision x the
distance of the score from the threshold, |margin| < 0.05, < 0.15, < 0.3,
>= 0.3 (borderline pairs are few in a corpus, so they get a stratum of their
own); ``decision`` = the decision alone; ``none`` = a simple random sample.
The n pairs are shared out equally over the strata (a stratum smaller than
its share gives all its pairs, the rest goes to the others), drawn with a
seeded generator."""
import csv
import json
from html import escape
from pathlib import Path
from typing import Any, Dict, List, Sequence

import numpy

from ..saving import atomic_write
from ..annotate.record_format import CONVERSATION_ID, FIRST, MARGIN, PAIR_ID, SCORE, SECOND, TURN_FIELDS, record_decision

STRATIFY = ("margin", "decision", "none")
BANDS = (0.05, 0.15, 0.3)
BAND_NAMES = [(b, f"|margin| < {b:g}") for b in BANDS]
LAST_BAND = f"|margin| >= {BANDS[-1]:g}"
COLUMNS = ("pair_id", "conversation_id", "first_speaker", "first_text", "second_speaker", "second_text",
           "label", "highlight", "note")


def stratum(record: Dict[str, Any], stratify: str) -> str:
    if stratify == "none":
        return "all"
    side = "paraphrase" if record_decision(record).is_paraphrase else "not paraphrase"
    if stratify == "decision":
        return side
    margin = abs(record.get(MARGIN.key) or 0.0)
    return next((f"{side}, {name}" for b, name in BAND_NAMES if margin < b), f"{side}, {LAST_BAND}")


def allocate(sizes: Dict[str, int], n: int) -> Dict[str, int]:
    """Equal shares of n over the strata, none above its size, the rest
    given to the strata with room (in name order)."""
    take = {name: 0 for name in sizes}
    left = min(n, sum(sizes.values()))
    while left > 0:
        room = [name for name in sorted(sizes) if take[name] < sizes[name]]
        share = max(1, left // len(room))
        for name in room:
            add = min(share, sizes[name] - take[name], left)
            take[name] += add
            left -= add
            if left == 0:
                break
    return take


def draw(records: Sequence[Dict[str, Any]], n: int, stratify: str, seed: int) -> "tuple[List[Dict], Dict]":
    """(the sampled records in a seeded shuffled order, the design)."""
    if stratify not in STRATIFY:
        raise ValueError(f"--stratify {stratify!r}: choose one of {', '.join(STRATIFY)}")
    if n < 1:
        raise ValueError("--n must be at least 1")
    scored = [r for r in records if isinstance(r.get(SCORE.key), (int, float))]
    if not scored:
        raise ValueError("no record has a score: there is nothing to validate")
    groups: Dict[str, List[Dict[str, Any]]] = {}
    for record in scored:
        groups.setdefault(stratum(record, stratify), []).append(record)
    take = allocate({k: len(v) for k, v in groups.items()}, n)
    rng = numpy.random.default_rng(seed)
    sample: List[Dict[str, Any]] = []
    design: Dict[str, Any] = {"stratify": stratify, "seed": seed, "n": 0, "strata": {}, "pairs": {}}
    for name in sorted(groups):
        picked = [groups[name][i] for i in sorted(rng.choice(len(groups[name]), take[name], replace=False))]
        sample += picked
        design["strata"][name] = {"population": len(groups[name]), "sample": len(picked)}
        design["pairs"].update({str(r[PAIR_ID.key]): name for r in picked})
    sample = [sample[i] for i in rng.permutation(len(sample))]
    design["n"] = len(sample)
    return sample, design


def sheet_rows(sample: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    return [{"pair_id": r[PAIR_ID.key], "conversation_id": r.get(CONVERSATION_ID.key),
             "first_speaker": r[FIRST.key].get(TURN_FIELDS.speaker), "first_text": r[FIRST.key].get(TURN_FIELDS.text),
             "second_speaker": r[SECOND.key].get(TURN_FIELDS.speaker), "second_text": r[SECOND.key].get(TURN_FIELDS.text),
             "label": "", "highlight": "", "note": ""} for r in sample]


INSTRUCTIONS = ("For each pair: label = 1 when the second turn paraphrases (part of) the first turn, 0 when "
                "it does not; highlight = the words of the second turn that paraphrase (optional); note = "
                "anything else. Code every pair in the sheet.")


def sheet_html(rows: Sequence[Dict[str, Any]], title: str) -> str:
    css = ("body{font:15px/1.5 system-ui,sans-serif;max-width:50rem;margin:1.5rem auto;padding:0 1rem}"
           ".pair{border:1px solid #d0d7de;border-radius:6px;padding:.5rem 1rem;margin:1rem 0}"
           ".who{color:#57606a;font-size:.85rem}.id{font-weight:600}")
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{escape(title)}</title><style>{css}</style></head><body>",
             f"<h1>{escape(title)}</h1><p>{escape(INSTRUCTIONS)}</p>"]
    for i, row in enumerate(rows, 1):
        parts.append(
            f'<section class="pair" id="pair-{i}"><div class="id">{i}. {escape(str(row["pair_id"]))}</div>'
            f'<div class="who">{escape(str(row["first_speaker"]))} · first turn</div><p>{escape(str(row["first_text"]))}</p>'
            f'<div class="who">{escape(str(row["second_speaker"]))} · second turn</div><p>{escape(str(row["second_text"]))}</p>'
            "</section>")
    parts.append("</body></html>")
    return "\n".join(parts)


def design_path(sheet: Path, records: Sequence[Path]) -> Path:
    """The default design file: SHEET's name + ``.design.json`` in the
    folder of the first records input."""
    return Path(records[0]).resolve().parent / (Path(sheet).stem + ".design.json")


def check_design_path(design: Path, sheet: Path) -> None:
    """ValueError when ``design`` lies in the sheet's folder (or below it),
    where the coders would get it with the sheet."""
    folder = Path(sheet).resolve().parent
    target = Path(design).resolve()
    if folder == target.parent or folder in target.parents:
        raise ValueError(f"the design {design} would lie in the coding sheet's folder {folder}, which the coders get: "
                         "its stratum names give the model's decisions (give --design-out outside that folder, or "
                         "put the sheet in a folder of its own)")


def coding_page_path(sheet: Path) -> Path:
    """The coding page beside the sheet: SHEET.coding.html."""
    return Path(sheet).with_suffix(".coding.html")


def write_sheet(sample_rows: Sequence[Dict[str, Any]], design: Dict[str, Any], sheet: Path,
                design_file: Path) -> List[Path]:
    """SHEET.csv, SHEET.html, SHEET.coding.html (for the coders) and the
    design file (which gets the sheet's id); the paths written."""
    from .coding_page import coding_page, sheet_id

    sheet = Path(sheet)
    design["sheet_id"] = sheet_id(sample_rows)
    check_design_path(design_file, sheet)
    sheet.parent.mkdir(parents=True, exist_ok=True)
    Path(design_file).parent.mkdir(parents=True, exist_ok=True)

    def write_csv(tmp: Path) -> None:
        with tmp.open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows(sample_rows)
    html_path = sheet.with_suffix(".html")
    atomic_write(sheet, write_csv)
    atomic_write(html_path, lambda tmp: tmp.write_text(sheet_html(sample_rows, f"Coding sheet {sheet.name}"),
                                                       encoding="utf-8"))
    page_path = coding_page_path(sheet)
    atomic_write(page_path, lambda tmp: tmp.write_text(coding_page(sample_rows, sheet.name), encoding="utf-8"))
    atomic_write(Path(design_file), lambda tmp: tmp.write_text(json.dumps(design, indent=1), encoding="utf-8"))
    return [sheet, html_path, page_path, Path(design_file)]
