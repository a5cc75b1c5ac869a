"""The annotate job: score every turn pair of a dialog corpus and write one
JSON record per pair (docs/annotate.md). ``record_format`` and ``annotator`` are
shared by the local engine (``local``) and the Ray engine (``ray_engine``)."""
from ..loading import load_pipeline
from .annotator import PairAnnotator, find_readout, row_length
from .record_format import invalid_reason, make_record, pair_row

__all__ = ["PairAnnotator", "find_readout", "invalid_reason", "load_pipeline", "make_record", "pair_row", "row_length"]
