"""The annotate job: score every turn pair of a dialog corpus and write one
JSON record per pair (docs/annotate.md). ``record_format`` (the record codec)
and ``annotator`` are shared by the local engine (``local``), the Ray engine
(``ray_engine``) and, for reading records, ``visualize`` and ``report``."""
from .annotator import PairAnnotator
from .record_format import invalid_reason

__all__ = ["PairAnnotator", "invalid_reason"]
