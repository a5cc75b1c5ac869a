"""The pairs a page shows: pair views read from a ``.spacy`` file (DocBin of
pair Docs: processed, or converted gold), an annotate ``.jsonl`` output, or
the directory of ``.jsonl`` parts that ``annotate --engine ray`` writes; and
their orders (the ``visualize`` command: ``spacy_paraphrase/cli/visualize.py``).
"""
from pathlib import Path
from typing import List, Optional

import srsly
from spacy.tokens import DocBin
from spacy.vocab import Vocab

from ..pair_doc import PairDocError
from .record_views import pair_view_from_record
from .views import PairView, pair_view_from_doc

SORTS = ("agreement", "margin", "score")


INPUT_KINDS = ("a .spacy file of pair Docs, an annotate .jsonl file, or the directory an "
               "annotate --engine ray run wrote")


def record_files(directory: Path) -> List[Path]:
    """The record files of an ``annotate --engine ray`` OUTPUT directory: its
    ``*.jsonl`` files, by name (docs/ray.md; ``ray_engine.output_files``).
    ValueError for a directory that is not one."""
    directory = Path(directory)
    if (directory / "utterances.jsonl").is_file():
        found = sorted(p.name for p in directory.glob("*annotate.records.jsonl"))
        hint = f"pass its records file, {directory / found[0]}" if found else f"pass {INPUT_KINDS}"
        raise ValueError(f"{directory} is a ConvoKit corpus, not annotate records; {hint}.")
    files = sorted(p for p in directory.glob("*.jsonl") if p.is_file())
    if not files:
        raise ValueError(f"{directory} is a directory without .jsonl files; pass {INPUT_KINDS}.")
    return files


def _record_views(files: List[Path], threshold: Optional[float]) -> List[PairView]:
    views: List[PairView] = []
    for path in files:
        with path.open(encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    views.append(pair_view_from_record(srsly.json_loads(line), len(views), threshold=threshold))
                except ValueError as err:
                    raise ValueError(f"{path}, line {number}: {err}") from None
    return views


def load_views(path: Path, *, spans_key: str = "paraphrase", threshold: Optional[float] = None) -> List[PairView]:
    """Pair views of every pair in a ``.spacy`` or annotate ``.jsonl`` file,
    or in the ``.jsonl`` files of an ``annotate --engine ray`` OUTPUT
    directory (file by file in name order, each in its order). Raises
    ValueError naming the file (and line or Doc) for bad input."""
    path = Path(path)
    if path.is_dir():
        return _record_views(record_files(path), threshold)
    if not path.is_file():
        raise ValueError(f"{path}: file not found")
    if path.suffix == ".spacy":
        docs = DocBin().from_disk(path).get_docs(Vocab())
        views = []
        for i, doc in enumerate(docs):
            try:
                views.append(pair_view_from_doc(doc, i, spans_key=spans_key, threshold=threshold))
            except (PairDocError, ValueError) as err:
                raise ValueError(f"{path}, Doc {i + 1}: {err}") from None
        return views
    if path.suffix == ".jsonl":
        return _record_views([path], threshold)
    raise ValueError(f"{path}: expected {INPUT_KINDS}")


def sort_views(views: List[PairView], by: Optional[str]) -> List[PairView]:
    """``agreement``: most contested first (lowest agreement); ``margin``:
    borderline decisions first (smallest |pair score − threshold|); ``score``:
    highest score first. Pairs without the value go last; ties keep the input
    order. ``None`` keeps the input order."""
    if by is None:
        return list(views)
    if by not in SORTS:
        raise ValueError(f"Unknown sort {by!r}; choose one of {SORTS}")
    if by == "agreement":
        return sorted(views, key=lambda v: (v.agreement is None, v.agreement or 0.0))
    if by == "margin":
        return sorted(views, key=lambda v: (v.margin is None, abs(v.margin or 0.0)))
    return sorted(views, key=lambda v: (v.score is None, -(v.score or 0.0)))
