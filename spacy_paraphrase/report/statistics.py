"""The report's numbers: paraphrase rates with 95% intervals from a cluster
bootstrap (whole conversations are resampled: pairs of one interview are not
independent), per group and per period (docs/report.md, "Intervals").
"""
from dataclasses import asdict, dataclass
from typing import Dict, List, Optional, Sequence

import numpy

N_BOOT = 2000
LEVEL = 0.95
NOT_ESTIMABLE = "not estimable: fewer than 2 conversations"


@dataclass
class Rate:
    """A rate (paraphrases / pairs) and its interval; ``low`` / ``high`` are
    None when it is not estimable (``note`` says why)."""
    pairs: int
    paraphrases: int
    conversations: int
    rate: Optional[float]
    low: Optional[float] = None
    high: Optional[float] = None
    note: str = ""

    def as_dict(self) -> Dict[str, object]:
        return asdict(self)


def cluster_sums(values: numpy.ndarray, clusters: Sequence) -> "tuple[numpy.ndarray, numpy.ndarray]":
    _, index = numpy.unique(numpy.asarray([str(c) for c in clusters]), return_inverse=True)
    sums = numpy.bincount(index, weights=values)
    counts = numpy.bincount(index).astype(float)
    return sums, counts


CHUNK = 2_000_000  # cluster draws held at a time (memory stays flat for a corpus of any size)


def bootstrap_ratios(sums: numpy.ndarray, counts: numpy.ndarray, n_boot: int,
                     rng: numpy.random.Generator) -> numpy.ndarray:
    """``n_boot`` resampled ratios sum / count: each resample draws k of
    the k clusters with replacement, in chunks."""
    k = len(sums)
    out = numpy.empty(n_boot)
    step = max(1, CHUNK // k)
    for start in range(0, n_boot, step):
        rows = min(step, n_boot - start)
        drawn = rng.integers(0, k, size=(rows, k))
        out[start:start + rows] = sums[drawn].sum(axis=1) / counts[drawn].sum(axis=1)
    return out


def cluster_bootstrap(values: Sequence[float], clusters: Sequence, *, n_boot: int = N_BOOT,
                      level: float = LEVEL, seed: int = 0) -> Rate:
    """Mean of ``values`` (0/1 decisions: the rate) with the percentile
    interval of a bootstrap that draws whole clusters with replacement (the
    ratio estimator: all pairs of the drawn clusters). Fewer than two
    clusters: the interval is not estimable (None, with a note)."""
    values = numpy.asarray(values, dtype=float)
    n = len(values)
    if n == 0:
        return Rate(0, 0, 0, None, note="no pairs")
    sums, counts = cluster_sums(values, clusters)
    k = len(sums)
    rate = float(values.mean())
    out = Rate(n, int(round(values.sum())), k, rate)
    if k < 2:
        out.note = NOT_ESTIMABLE
        return out
    rates = bootstrap_ratios(sums, counts, n_boot, numpy.random.default_rng(seed))
    alpha = (1 - level) / 2
    out.low, out.high = (float(x) for x in numpy.quantile(rates, [alpha, 1 - alpha]))
    return out


def group_rates(decisions: Sequence[bool], clusters: Sequence, groups: Sequence[Optional[str]],
                *, seed: int = 0, n_boot: int = N_BOOT) -> List[Dict[str, object]]:
    """One row per group (records without a value left out): the group, its
    rate and interval (each group's own cluster bootstrap), most pairs first."""
    rows = []
    by_group: Dict[str, List[int]] = {}
    for i, group in enumerate(groups):
        if group is not None:
            by_group.setdefault(group, []).append(i)
    for group, idx in by_group.items():
        rate = cluster_bootstrap([decisions[i] for i in idx], [clusters[i] for i in idx], seed=seed, n_boot=n_boot)
        rows.append({"group": group, **rate.as_dict()})
    rows.sort(key=lambda r: (-r["pairs"], r["group"]))
    return rows


def score_histogram(scores: Sequence[Optional[float]], bins: int = 20) -> List[Dict[str, float]]:
    """Pairs per score bin over [0, 1] (pairs without a score left out)."""
    values = numpy.asarray([s for s in scores if s is not None], dtype=float)
    counts, edges = numpy.histogram(numpy.clip(values, 0.0, 1.0), bins=bins, range=(0.0, 1.0))
    edges = numpy.round(edges, 10)  # 0.15, not 0.15000000000000002
    return [{"low": float(a), "high": float(b), "pairs": int(c)} for a, b, c in zip(edges[:-1], edges[1:], counts)]
