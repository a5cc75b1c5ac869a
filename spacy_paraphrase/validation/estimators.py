"""The corpus' paraphrase rate and the model's errors from a coded sample
(``validate score``; docs/report.md, "Which rate to report").

The sample: every pair of the corpus belongs to a stratum h (of ``validate
sheet``: the model's decision x its margin, the decision, or one stratum);
n_h of its N_h pairs were coded. A coded pair's reference y is its coders'
majority (a tie as ``--tie`` says: 0.5, 1, 0 or left out) or their mean vote.

- **Design-based rate**: sum_h N_h ybar_h / sum_h N_h, the coders' labels
  weighted back to the corpus by stratum (every coded pair weighs N_h / n_h).
  It holds whatever the strata are. Precision, recall, specificity and F1 are
  the weighted confusion counts' ratios.
- **Rogan-Gladen rate**: (p + Sp - 1) / (Se + Sp - 1), p the model's rate on
  the whole corpus, Se / Sp its weighted recall / specificity, clipped to
  [0, 1]. Only where the sample was drawn without regard to the model's
  output (one stratum): when the strata are the model's decisions (or finer),
  the weighted count of the model's positives is the corpus' count and the
  correction returns the design-based rate exactly, so it is not reported.

**Intervals** (all figures from the same resamples, so jointly): a
stratified cluster bootstrap. Each resample draws k - 1 of the corpus' k
conversations with replacement (Rao and Wu's 1988 bootstrap with n - 1
units, whose variance is the unbiased with-replacement one: drawing k
understates it by (k - 1) / k, which shows with few conversations); the
corpus pairs of the drawn
conversations give N_h* and p*, their coded pairs n_h* and the sums, and
every figure is computed again with the weights N_h* / n_h*. Resampling
whole conversations (the primary units) carries both the between-
conversation variation and the variation of the coded pairs within them
(the "ultimate cluster" variance); the interval is the 2.5th to 97.5th
percentile. It is an interval for the rate of the talk the corpus stands for
(as the report's conversation bootstrap of the model's rate), not for the
corpus' own rate, which a census of it would know exactly. A resample in
which a stratum has corpus pairs but no coded pair, or a ratio has a zero
denominator, is not usable; more than 5% unusable: the interval is "not
estimable" (code more pairs of the thin strata, or draw with --stratify
decision)."""
from typing import Any, Dict, List, Optional, Sequence

import numpy

from ..report.statistics import CHUNK, LEVEL, N_BOOT, NOT_ESTIMABLE

FIGURES = ("rate", "precision", "recall", "specificity", "f1", "accuracy", "rogan_gladen")
TOO_FEW = "interval not estimable (too few usable resamples)"


def _codes(values: Sequence) -> "tuple[List[str], numpy.ndarray]":
    names, index = numpy.unique(numpy.asarray([str(v) for v in values]), return_inverse=True)
    return [str(n) for n in names], index


def figures(N: numpy.ndarray, n: numpy.ndarray, sums: Dict[str, numpy.ndarray], p: numpy.ndarray,
            coded: numpy.ndarray) -> Dict[str, numpy.ndarray]:
    """Every figure of (R, H) stratum counts N (corpus pairs), n (coded
    pairs), sums ``y``, ``d``, ``dy`` of the coded pairs (y the reference, d
    the model's 0/1 decision) and (R,) model rates p; ``coded`` marks the
    strata that enter (those with coded pairs in the sample). NaN where not
    defined (a stratum with corpus pairs but no coded pair in a resample, a
    zero denominator)."""
    with numpy.errstate(divide="ignore", invalid="ignore"):
        # a stratum absent from a resample (no corpus pair) weighs nothing; one with corpus pairs but
        # no coded pair leaves the resample unusable
        w = numpy.where(n > 0, N / numpy.where(n > 0, n, 1), numpy.where(N > 0, numpy.nan, 0.0))[:, coded]
        t = {key: (w * s[:, coded]).sum(axis=1) for key, s in sums.items()}
        total = N[:, coded].sum(axis=1)
        ty, td, tdy = t["y"], t["d"], t["dy"]
        out = {"rate": ty / total, "precision": tdy / td, "recall": tdy / ty,
               "specificity": (total - td - ty + tdy) / (total - ty),
               "accuracy": (total - td - ty + 2 * tdy) / total}
        out["f1"] = 2 * tdy / (td + ty)
        j = out["recall"] + out["specificity"] - 1
        out["rogan_gladen"] = numpy.where(j > 0, numpy.clip((p + out["specificity"] - 1) / j, 0.0, 1.0), numpy.nan)
    for key in ("precision", "recall", "specificity", "f1", "rate", "accuracy"):
        out[key] = numpy.where(numpy.isfinite(out[key]), out[key], numpy.nan)
    return out


def _interval(value: float, draws: Optional[numpy.ndarray], level: float, why_not: str) -> Dict[str, Any]:
    out: Dict[str, Any] = {"value": None if numpy.isnan(value) else float(value), "low": None, "high": None}
    if out["value"] is None:
        out["note"] = "not estimable"
    elif draws is None:
        out["note"] = why_not
    else:
        good = draws[~numpy.isnan(draws)]
        if len(good) < 0.95 * len(draws):
            out["note"] = TOO_FEW
        else:
            alpha = (1 - level) / 2
            out["low"], out["high"] = (float(x) for x in numpy.quantile(good, [alpha, 1 - alpha]))
    return out


class StratifiedSample:
    """A corpus (every pair's conversation, stratum and 0/1 decision) and the
    coded pairs of it (their conversation and stratum, as indices into the
    corpus' labels)."""

    def __init__(self, clusters: Sequence, strata: Sequence, decisions: Sequence[float],
                 coded: Sequence[int]):
        self.cluster_names, self.cluster = _codes(clusters)
        self.strata, self.stratum = _codes(strata)
        self.decision = numpy.asarray(decisions, dtype=float)
        self.coded = numpy.asarray(coded, dtype=int)
        self.k, self.h = len(self.cluster_names), len(self.strata)

    def _table(self, rows: numpy.ndarray, values: numpy.ndarray) -> numpy.ndarray:
        """(k, H): the sum of ``values`` per conversation and stratum of ``rows``."""
        index = self.cluster[rows] * self.h + self.stratum[rows]
        return numpy.bincount(index, weights=values, minlength=self.k * self.h).reshape(self.k, self.h)

    def population(self) -> Dict[str, int]:
        return {name: int(c) for name, c in zip(self.strata, numpy.bincount(self.stratum, minlength=self.h))}

    def estimate(self, ref: Sequence[float], *, n_boot: int = N_BOOT, seed: int = 0,
                 level: float = LEVEL) -> Dict[str, Dict[str, Any]]:
        """Each of FIGURES with its interval, the reference ``ref`` given per
        coded pair (NaN: left out)."""
        ref = numpy.asarray(ref, dtype=float)
        keep = ~numpy.isnan(ref)
        rows, y = self.coded[keep], ref[keep]
        d = self.decision[rows]
        every = numpy.arange(len(self.decision))
        # per conversation: corpus pairs per stratum, coded pairs and sums per stratum, the decisions
        tables = [self._table(every, numpy.ones(len(every))), self._table(rows, numpy.ones(len(rows))),
                  self._table(rows, y), self._table(rows, d), self._table(rows, d * y)]
        flat = numpy.hstack(tables + [numpy.bincount(self.cluster, weights=self.decision, minlength=self.k)[:, None]])
        coded = tables[1].sum(axis=0) > 0

        def compute(totals: numpy.ndarray) -> Dict[str, numpy.ndarray]:
            parts = [totals[:, i * self.h:(i + 1) * self.h] for i in range(5)]
            p = totals[:, -1] / parts[0].sum(axis=1)
            return figures(parts[0], parts[1], {"y": parts[2], "d": parts[3], "dy": parts[4]}, p, coded)

        point = compute(flat.sum(axis=0)[None, :])
        draws = compute(self._resample(flat, n_boot, seed)) if self.k >= 2 and len(rows) else None
        why_not = NOT_ESTIMABLE if self.k < 2 else "not estimable: no coded pair"
        return {key: _interval(point[key][0], None if draws is None else draws[key], level, why_not)
                for key in FIGURES}

    def _resample(self, flat: numpy.ndarray, n_boot: int, seed: int) -> numpy.ndarray:
        """(n_boot, columns): the column sums of ``flat`` (one row per
        conversation) over k - 1 conversations drawn with replacement, each
        resample (module doc); the same seed draws the same conversations."""
        rng = numpy.random.default_rng(seed)
        chunks = []
        step = max(1, CHUNK // self.k)
        for start in range(0, n_boot, step):
            r = min(step, n_boot - start)
            drawn = rng.integers(0, self.k, size=(r, self.k - 1)) + numpy.arange(r)[:, None] * self.k
            times = numpy.bincount(drawn.ravel(), minlength=r * self.k).reshape(r, self.k)
            chunks.append(times @ flat)
        return numpy.vstack(chunks)

    def totals(self, values: Dict[str, Sequence[float]], *, n_boot: int = N_BOOT,
               seed: int = 0) -> "tuple[Dict[str, numpy.ndarray], Optional[Dict[str, numpy.ndarray]]]":
        """Per named value of the coded pairs (in ``coded``' order): its total
        weighted to the corpus (sum_h N_h / n_h * the stratum's sum; NaN where
        a stratum has corpus pairs but no coded pair) under its name, and its
        plain total under ``name + ":plain"``; for the sample ((1,) arrays)
        and for the resamples ((n_boot,), the conversations drawn as
        ``estimate`` draws them; None with fewer than two conversations). The
        figures that are functions of such totals (ratios: the word-level
        figures) get their intervals from these."""
        rows = self.coded
        every = numpy.arange(len(self.decision))
        names = list(values)
        tables = [self._table(every, numpy.ones(len(every))), self._table(rows, numpy.ones(len(rows)))]
        tables += [self._table(rows, numpy.asarray(values[name], dtype=float)) for name in names]
        flat = numpy.hstack(tables)
        coded = tables[1].sum(axis=0) > 0

        def compute(sums: numpy.ndarray) -> Dict[str, numpy.ndarray]:
            parts = [sums[:, i * self.h:(i + 1) * self.h][:, coded] for i in range(len(tables))]
            N, n = parts[0], parts[1]
            with numpy.errstate(divide="ignore", invalid="ignore"):
                w = numpy.where(n > 0, N / numpy.where(n > 0, n, 1), numpy.where(N > 0, numpy.nan, 0.0))
            out = {}
            for name, part in zip(names, parts[2:]):
                out[name] = (w * part).sum(axis=1)
                out[name + ":plain"] = part.sum(axis=1)
            return out

        point = compute(flat.sum(axis=0)[None, :])
        draws = compute(self._resample(flat, n_boot, seed)) if self.k >= 2 and len(rows) else None
        return point, draws
