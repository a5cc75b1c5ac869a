"""The ``pair_classifier`` component: one label per pair Doc (``doc.cats``),
its model (``spacy_paraphrase.PairClassifier.v1``) and its scorer."""
from ..lazy import lazy_exports

# imported on first use (spacy_paraphrase/lazy.py)
_EXPORTS = {
    "make_pair_classifier_scorer": ".scorer",
    "predicted_labels": ".scorer",
    "reference_targets": ".scorer",
    "score_pair_classifier": ".scorer",
    "POOLINGS": ".model",
    "build_pair_classifier": ".model",
    "pooling_matrix": ".model",
    "PairClassifier": ".component",
    "make_pair_classifier": ".component",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = list(_EXPORTS)
