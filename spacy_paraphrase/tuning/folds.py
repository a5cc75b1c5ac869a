"""K-fold cross-tuning: an honest estimate of what tuning a setting buys.

Scores after tuning a threshold on the same pairs are optimistic. Here the
examples are split into k folds; the setting is tuned on k-1 folds and the
held-out fold is scored with it; the fold scores are averaged over several
seeded repetitions (each repetition shuffles the examples anew).

This module holds the fold loop only. What is tuned and how a fold is scored
belong to the component's tuning: ``tuning.spans`` (``paraphrase_spans``: the
pair and highlight thresholds, the span decoding, the vote-share map) and
``tuning.classifier`` (the decision threshold of a binary ``pair_classifier``).
"""
import random
import statistics
import sys
from typing import Callable, Dict, List, Optional, Sequence, TypeVar

from spacy.training import Example
from tqdm import tqdm

Chosen = TypeVar("Chosen")


def check_folds(n_examples: int, folds: int, repeats: int = 1) -> None:
    """Raise ValueError unless 2 <= folds <= n_examples and repeats >= 1."""
    if folds < 2 or folds > n_examples:
        raise ValueError(f"Need 2 <= folds <= {n_examples} (number of pairs), got {folds}")
    if repeats < 1:
        raise ValueError(f"Need repeats >= 1, got {repeats}")


def cross_tuned(
    examples: Sequence[Example],
    tune: Callable[[List[Example]], Chosen],
    score: Callable[[List[Example], Chosen], Dict],
    *,
    folds: int = 4,
    repeats: int = 5,
    seed: int = 0,
    progress: Optional[str] = None,
) -> Dict:
    """Tune on k-1 folds with ``tune(examples) -> chosen``, score the held-out
    fold with ``score(examples, chosen) -> scores``, for ``repeats`` seeded
    shuffles. Returns ``scores`` (the mean of every numeric score over all
    held-out folds; ``None`` scores are left out), ``spread`` (their standard
    deviation), ``chosen`` (what each fold's tuning chose), and the settings.
    ``progress``: a description to show a bar of the folds on stderr with
    (shown on a terminal only); None: no bar."""
    examples = list(examples)
    check_folds(len(examples), folds, repeats)
    fold_scores: List[Dict] = []
    chosen: List[Chosen] = []
    bar = tqdm(total=folds * repeats, desc=progress, unit="fold", file=sys.stderr, leave=False,
               disable=True if progress is None else None)
    for r in range(repeats):
        order = list(range(len(examples)))
        random.Random(seed + r).shuffle(order)
        for k in range(folds):
            held = set(order[k::folds])
            best = tune([eg for i, eg in enumerate(examples) if i not in held])
            fold_scores.append(score([eg for i, eg in enumerate(examples) if i in held], best))
            chosen.append(best)
            bar.update(1)
    bar.close()
    keys = [k for k, v in fold_scores[0].items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    mean, spread = {}, {}
    for key in keys:
        vals = [s[key] for s in fold_scores if s.get(key) is not None]
        if vals:
            mean[key] = float(statistics.mean(vals))
            spread[key] = float(statistics.stdev(vals)) if len(vals) > 1 else 0.0
    return {
        "folds": folds,
        "repeats": repeats,
        "seed": seed,
        "n_pairs": len(examples),
        "scores": mean,
        "spread": spread,
        "chosen": chosen,
    }
