"""Coded files of the coding page made in the tests (validation/coding_page.py's format)."""
import csv
import json
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from spacy_paraphrase.validation.coding_page import FORMAT
from spacy_paraphrase.validation.words import turn_words

# a pair's code: (paraphrase, first-turn word indices, second-turn word indices)
Code = Tuple[bool, List[int], List[int]]


def sheet_rows(sheet: Path) -> List[Dict[str, str]]:
    with open(sheet, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def coded_file(path: Path, rows: List[Dict[str, str]], codes: Dict[str, Code], coder: str,
               sheet: Optional[str]) -> Path:
    """A coded file of ``codes`` (pair id -> code) for the sheet rows ``rows``."""
    pairs = []
    for row in rows:
        if row["pair_id"] not in codes:
            continue
        label, first, second = codes[row["pair_id"]]
        pairs.append({"pair_id": row["pair_id"], "paraphrase": label,
                      "first": {"speaker": row["first_speaker"], "words": turn_words(row["first_text"]),
                                "highlight": first},
                      "second": {"speaker": row["second_speaker"], "words": turn_words(row["second_text"]),
                                 "highlight": second}, "note": ""})
    path.write_text(json.dumps({"format": FORMAT, "version": 1, "sheet": sheet, "coder": coder, "pairs": pairs}),
                    encoding="utf-8")
    return path
