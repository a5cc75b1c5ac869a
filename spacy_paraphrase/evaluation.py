"""Scoring a pipeline on pair Docs: ``nlp.evaluate`` with pair throughput and
without the tokenizer's constant scores (the ``evaluate`` command and the
studies call this)."""
from typing import Dict, List

from spacy.training import Example

# spaCy's tokenizer scores (token_acc, token_p, token_r, token_f): always 1.0
# on pair Docs, whose tokens are the reference's; not the component's token F1.
TOKENIZER_KEYS = ("token_acc", "token_p", "token_r", "token_f")


# Pairs per batch when a command is given 0 (its default): a GPU needs full batches.
CPU_BATCH_SIZE = 8
GPU_BATCH_SIZE = 64


def default_batch_size() -> int:
    """``GPU_BATCH_SIZE`` when spaCy runs on a GPU (``spacy.require_gpu``), else ``CPU_BATCH_SIZE``."""
    from thinc.api import get_current_ops

    return GPU_BATCH_SIZE if type(get_current_ops()).__name__ == "CupyOps" else CPU_BATCH_SIZE


def evaluate_pipeline(nlp, examples: List[Example], batch_size: int = 0) -> Dict[str, object]:
    """``nlp.evaluate`` plus ``pairs_per_second`` (``speed`` is words per second;
    both time the pipeline only, not the scoring) and ``n_pairs``. ``batch_size``
    0: ``default_batch_size()``."""
    scores = nlp.evaluate(examples, batch_size=batch_size or default_batch_size())
    scores = {k: v for k, v in scores.items() if v is not None and k not in TOKENIZER_KEYS}
    n_words = sum(len(eg.predicted) for eg in examples)
    if scores.get("speed") and n_words:
        scores["pairs_per_second"] = scores["speed"] * len(examples) / n_words
    scores["n_pairs"] = len(examples)
    return scores
