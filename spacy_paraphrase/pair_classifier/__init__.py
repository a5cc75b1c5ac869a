"""The ``pair_classifier`` component: one label per pair Doc (``doc.cats``),
its model (``spacy_paraphrase.PairClassifier.v1``) and its scorer."""
from .scorer import make_pair_classifier_scorer, predicted_labels, reference_targets, score_pair_classifier
from .model import POOLINGS, build_pair_classifier, pooling_matrix
from .component import PairClassifier, make_pair_classifier

__all__ = [
    "PairClassifier",
    "make_pair_classifier",
    "POOLINGS",
    "build_pair_classifier",
    "pooling_matrix",
    "make_pair_classifier_scorer",
    "predicted_labels",
    "reference_targets",
    "score_pair_classifier",
]
