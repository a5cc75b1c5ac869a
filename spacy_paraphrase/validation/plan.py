"""``validate plan``: how many pairs to code for a target 95% interval
half-width of the corpus rate, or of the model's precision or recall
(docs/report.md, "How many pairs to code").

The corpus' pairs fall into the strata of ``validate sheet`` and, within a
stratum, into cells by the model's decision d. Each cell c gets a prior
chance pi_c that its pairs are paraphrases: by default the mean score of its
pairs (the score read as a calibrated probability), or, with ``--error-rate
E``, 1 - E for the model's positives and E for its negatives. Every figure
is a ratio of corpus totals, R = sum a / sum b (the rate: a = y, b = 1;
precision: a = y d, b = d; recall: a = y d, b = y), and its stratified
variance is the linearised one,

    V(R) = sum_h N_h^2 / n_h * S_h^2(u) / B^2,   u = a - R b,

S_h^2(u) the variance of u over stratum h's pairs under the priors, B the
corpus total of b, n_h the pairs ``validate sheet`` draws from h for a sheet
of n (equal allocation, as it draws). The half-width is 1.96 sqrt(V * deff),
deff a design effect for conversations that differ (1: pairs as if
independent; the bootstrap of ``validate score`` also carries the corpus'
own variation, so take the plan as a guide). The plan is the smallest n
whose half-width reaches the target (the half-width only shrinks as n
grows: no stratum ever gets fewer pairs)."""
from typing import Any, Dict, List, Optional, Sequence

import numpy

from .sheet import STRATIFY, allocate, stratum
from ..annotate.record_format import SCORE, record_decision

FIGURES = ("rate", "precision", "recall")
Z = 1.959963984540054


class PlanError(ValueError):
    """A plan that cannot be made (bad options, no scored records)."""


def cells(records: Sequence[Dict[str, Any]], stratify: str, error_rate: Optional[float]) -> List[Dict[str, Any]]:
    """One cell per stratum and decision: its stratum, decision d, pairs N
    and prior pi."""
    groups: Dict[tuple, List[float]] = {}
    for r in records:
        if isinstance(r.get(SCORE.key), (int, float)):
            key = (stratum(r, stratify), float(bool(record_decision(r).is_paraphrase)))
            groups.setdefault(key, []).append(min(1.0, max(0.0, float(r[SCORE.key]))))
    if not groups:
        raise PlanError("no record has a score: there is nothing to plan")
    out = []
    for (name, d), scores in sorted(groups.items()):
        prior = float(numpy.mean(scores)) if error_rate is None else (1 - error_rate if d else error_rate)
        out.append({"stratum": name, "d": d, "pairs": len(scores), "prior": prior})
    return out


def half_widths(cell_list: Sequence[Dict[str, Any]], take: Dict[str, int], deff: float = 1.0) -> Dict[str, Optional[float]]:
    """Each figure's predicted 95% half-width when ``take[h]`` pairs of
    stratum h are coded (None: a stratum without coded pairs, or a figure
    not defined under the priors)."""
    N = numpy.asarray([c["pairs"] for c in cell_list], dtype=float)
    d = numpy.asarray([c["d"] for c in cell_list])
    pi = numpy.asarray([c["prior"] for c in cell_list])
    names = [c["stratum"] for c in cell_list]
    if any(take.get(h, 0) < 1 for h in set(names)):
        return {key: None for key in FIGURES}
    sums = {"rate": ((N * pi).sum(), N.sum()), "precision": ((N * pi * d).sum(), (N * d).sum()),
            "recall": ((N * pi * d).sum(), (N * pi).sum())}
    out: Dict[str, Optional[float]] = {}
    for key, (a_total, b_total) in sums.items():
        if b_total <= 0:
            out[key] = None
            continue
        r = a_total / b_total
        # u = alpha y + beta in each cell (y ~ Bernoulli(pi), d fixed)
        ones, zeros = numpy.ones_like(pi), numpy.zeros_like(pi)
        alpha, beta = {"rate": (ones, -r * ones), "precision": (d, -r * d), "recall": (d - r, zeros)}[key]
        mean_u = alpha * pi + beta
        mean_u2 = pi * (alpha + beta) ** 2 + (1 - pi) * beta ** 2
        var = 0.0
        for h in set(names):
            in_h = numpy.asarray([n == h for n in names])
            w = N[in_h] / N[in_h].sum()
            s2 = (w * mean_u2[in_h]).sum() - (w * mean_u[in_h]).sum() ** 2
            var += N[in_h].sum() ** 2 / take[h] * s2
        out[key] = float(Z * numpy.sqrt(deff * var) / b_total)
    return out


def plan(records: Sequence[Dict[str, Any]], half_width: float, *, figure: str = "rate", stratify: str = "margin",
         error_rate: Optional[float] = None, deff: float = 1.0) -> Dict[str, Any]:
    """The smallest sheet whose ``figure`` reaches ``half_width`` (module doc)."""
    if figure not in FIGURES:
        raise PlanError(f"--for {figure!r}: choose one of {', '.join(FIGURES)}")
    if stratify not in STRATIFY:
        raise PlanError(f"--stratify {stratify!r}: choose one of {', '.join(STRATIFY)}")
    if not 0 < half_width < 1:
        raise PlanError("--half-width must be between 0 and 1 (e.g. 0.05)")
    if error_rate is not None and not 0 <= error_rate < 0.5:
        raise PlanError("--error-rate must be at least 0 and below 0.5")
    if deff < 1:
        raise PlanError("--deff must be at least 1")
    cell_list = cells(records, stratify, error_rate)
    sizes: Dict[str, int] = {}
    for c in cell_list:
        sizes[c["stratum"]] = sizes.get(c["stratum"], 0) + c["pairs"]
    total = sum(sizes.values())

    def width(n: int) -> Optional[float]:
        return half_widths(cell_list, allocate(sizes, n), deff)[figure]

    at_most = width(total)
    reachable = at_most is not None and at_most <= half_width
    low, high = 1, total
    while reachable and low < high:  # the smallest n that reaches the target
        mid = (low + high) // 2
        w = width(mid)
        if w is not None and w <= half_width:
            high = mid
        else:
            low = mid + 1
    n = low if reachable else total
    take = allocate(sizes, n)
    return {"figure": figure, "half_width": half_width, "reachable": reachable, "n": n, "stratify": stratify,
            "prior": "scores" if error_rate is None else f"error rate {error_rate:g}", "deff": deff,
            "half_widths": half_widths(cell_list, take, deff),
            "strata": [{"stratum": h, "pairs": sizes[h], "sample": take[h],
                        "prior": sum(c["prior"] * c["pairs"] for c in cell_list if c["stratum"] == h) / sizes[h]}
                       for h in sorted(sizes)]}
