"""The search every tuned setting shares: the grid of values a sweep tries
(``grid``; ``DEFAULT_VALUES`` is ``grid()``, 0.05 ... 0.95), the objective
"maximize a score key" (``score_key_objective``) and the best of a sweep
(``sweep_found``)."""
from typing import Callable, Dict, List, Sequence, Tuple

import numpy

from .base import Found, TuningError

# A component's scorer: scorer(examples, name=..., **settings) -> scores.
Scorer = Callable[..., Dict]

GRID_START, GRID_END, GRID_SIZE = 0.05, 0.95, 19


def grid(start: float = GRID_START, end: float = GRID_END, n: int = GRID_SIZE) -> Tuple[float, ...]:
    """``n`` evenly spaced values from ``start`` to ``end``, rounded to 6 decimals."""
    return tuple(round(float(v), 6) for v in numpy.linspace(start, end, n))


DEFAULT_VALUES = grid()


def score_key_objective(key: str) -> Callable[[Dict], float]:
    """The objective "maximize the score ``key``" (e.g. ``paraphrase_spans_token_f``).
    A key the scorer does not produce raises ValueError; a score that is
    ``None`` (not computable on these Docs) ranks last."""

    def objective(scores: Dict) -> float:
        if key not in scores:
            known = ", ".join(k for k, v in scores.items() if isinstance(v, (int, float)))
            raise ValueError(f"Unknown score {key!r} to tune on; the scorer gives: {known}")
        value = scores[key]
        return float("-inf") if value is None else float(value)

    return objective


def sweep_found(name: str, key: str, label: str, objective: Callable[[Dict], float], results: List[Dict],
                shown: Sequence[str]) -> Found:
    """The ``Found`` of a one-value sweep: the best value (the first wins
    ties), the sweep's table, the report ``--output`` writes. TuningError when
    the objective cannot be computed at any value."""
    try:
        objective(results[0])
    except ValueError as err:
        raise TuningError(str(err)) from None
    if all(objective(r) == float("-inf") for r in results):
        raise TuningError(f"{label} cannot be computed on these pairs (None at every value): nothing to tune on")
    rows = [[f"{r['value']:.3f}", f"{objective(r):.4f}"] + [f"{r.get(k) or 0.0:.4f}" for k in shown]
            for r in results]
    header = [key, label] + [k.replace(name + "_", "") for k in shown]
    best = max(results, key=objective)
    return Found(
        key, {key: float(best["value"])},
        {"key": key, "objective": label, "best": best["value"], "sweep": results},
        [(header, rows)],
        f"Best {key} = {best['value']:.3f} ({label} {objective(best):.4f})",
    )
