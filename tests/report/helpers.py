"""Annotate records made in the tests (the record of docs/annotate.md)."""
import json
import random
from pathlib import Path
from typing import Dict, List, Optional

FIRST = "I went running with the dogs yesterday."
SECOND = "You were running with dogs?"


def record(pair_id: str, conversation_id: str, score: Optional[float], threshold: float = 0.4,
           host: str = "HOST", meta: Optional[dict] = None) -> Dict:
    passes = score is not None and score >= threshold
    out = {
        "pair_id": pair_id, "conversation_id": conversation_id,
        "first": {"speaker": "GUEST", "utterance_ids": [f"{pair_id}a"], "text": FIRST,
                  "offsets": [[0, len(FIRST)]]},
        "second": {"speaker": host, "utterance_ids": [f"{pair_id}b"], "text": SECOND,
                   "offsets": [[0, len(SECOND)]]},
        "score": score, "is_paraphrase": passes, "vote_share": score, "agreement": 0.5,
        "margin": None if score is None else score - threshold,
        "spans": [
            {"side": "first", "label": "SOURCE", "utterance_id": f"{pair_id}a", "start": 7, "end": 28,
             "text": "running with the dogs", "score": 0.7},
            {"side": "second", "label": "PARAPHRASE", "utterance_id": f"{pair_id}b", "start": 9, "end": 26,
             "text": "running with dogs", "score": 0.7},
        ] if passes else [],
    }
    if meta:
        out["meta"] = meta
    return out


def corpus(n_conversations: int = 12, per: int = 8, seed: int = 0, threshold: float = 0.4) -> List[Dict]:
    rng = random.Random(seed)
    return [record(f"c{c}-{i}", f"c{c}", rng.random(), threshold, host=f"HOST{c % 3}",
                   meta={"program": f"P{c % 2}", "date": f"20{10 + c % 4}-0{1 + i % 3}-01"})
            for c in range(n_conversations) for i in range(per)]


def write_records(path: Path, records: List[Dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def failed(result) -> str:
    """The one line of a command that failed on bad input: exit status 1,
    one line (not wrapped; the runner's output is not a terminal), no colour
    codes, no traceback."""
    assert result.exit_code == 1, result.output
    lines = result.output.strip("\n").split("\n")
    assert len(lines) == 1 and "\x1b" not in result.output and "Traceback" not in result.output, result.output
    return lines[0]
