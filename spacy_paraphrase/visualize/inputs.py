"""The pairs a page shows: pair views read from a ``.spacy`` file (DocBin of
pair Docs: processed, or converted gold) or an annotate output of any kind
(a ``.jsonl`` file, the directory of parts ``annotate --engine ray`` writes,
a ConvoKit corpus annotated with ``--output-format convokit``; read through
``annotate/record_format.py``); and
their orders (the ``visualize`` command: ``spacy_paraphrase/cli/visualize.py``).
"""
from pathlib import Path
from typing import List, Optional

from spacy.tokens import DocBin
from spacy.vocab import Vocab

from ..annotate.record_format import RecordsFileError, output_files, read_lines
from ..pair_doc import SPANS_KEY, PairDocError
from .record_views import pair_view_from_record
from .views import PairView, pair_view_from_doc

SORTS = ("agreement", "margin", "score")


INPUT_KINDS = ("a .spacy file of pair Docs, an annotate .jsonl file, the directory an annotate "
               "--engine ray run wrote, or a ConvoKit corpus annotated with --output-format convokit")


def _record_views(files: List[Path], threshold: Optional[float]) -> List[PairView]:
    views: List[PairView] = []
    for path in files:
        for number, record in read_lines(path):
            try:
                views.append(pair_view_from_record(record, len(views), threshold=threshold))
            except ValueError as err:
                raise ValueError(f"{path}, line {number}: {err}") from None
    return views


def load_views(path: Path, *, spans_key: str = SPANS_KEY, threshold: Optional[float] = None) -> List[PairView]:
    """Pair views of every pair in a ``.spacy`` file or an annotate output
    (``record_format.output_files``: file by file in name order, each in its
    order): a directory is an annotate output, a file is told by its
    extension (``.spacy`` or ``.jsonl``; the only guess made here, since
    ``output_files`` takes any file for records). Raises
    ValueError naming the file (and line or Doc) for bad input."""
    path = Path(path)
    if path.is_dir():
        try:
            files = output_files(path)[0]
        except RecordsFileError as err:
            raise ValueError(f"{err}; pass {INPUT_KINDS}.") from None
        return _record_views(files, threshold)
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
