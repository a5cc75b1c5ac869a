"""The word-level figures of ``validate score`` (docs/report.md, "Validate
your highlights"), from the coded files of the coding page (``coded.py``).

For every pair coded in a coded file, per turn: the coders who said yes
(k of them) and, per word, how many of them highlighted it (c). The
**coders' words** (the gold, as ContextDeP's): the words with 2c >= k
(highlighted by at least half of the coders who said yes; none when nobody
said yes). The **model's words**: those overlapping the record's spans
(``words.model_words``; none when the model said no).

- **Krippendorff's alpha on words** (nominal): the units are the words of
  both turns of the pairs that two coders or more called paraphrases, each
  valued 1 / 0 by each coder who said yes (a coder who said no highlights
  nothing and gives no value). With two values it is
  1 - (n - 1) o / (n_0 n_1), n_0 / n_1 the pairable 0 / 1 values, n their
  sum and o = sum over units of n_0u n_1u / (m_u - 1), so a sum over pairs.
- **Jaccard per turn** (as the paper): |model ∩ gold| / |model ∪ gold| of a
  turn, averaged over the pairs where both sets are non-empty.
- **Token precision / recall / F1**: over the words of both turns of all
  coded pairs, the model's words against the gold.

Pairs are weighted to the corpus as the pair figures are (N_h / n_h, the
strata of the coded-file pairs), and each figure is a ratio of weighted
totals (alpha of plain totals); the intervals come from the same stratified
conversation bootstrap (``estimators.StratifiedSample.totals``, the same
resamples as the pair figures)."""
from typing import Any, Dict, List, Sequence

import numpy

from ..metrics import jaccard
from ..report.statistics import LEVEL, N_BOOT, NOT_ESTIMABLE
from .agreement import krippendorff_alpha
from .coded import CodedFile
from .estimators import StratifiedSample, _interval
from .words import SIDES, model_words

GOLD = "the words highlighted by at least half of the coders who said yes"


def pair_counts(files: Sequence[CodedFile], pair_id: str) -> "tuple[int, List[numpy.ndarray], numpy.ndarray]":
    """(coders who said yes, per turn each word's highlight count, the yes
    coders' 0/1 rows of both turns' words) of one pair."""
    coded = [f.pairs[pair_id] for f in files if pair_id in f.pairs]
    yes = [p for p in coded if p.paraphrase]
    sizes = [len(w) for w in coded[0].words]
    rows = numpy.zeros((len(yes), sum(sizes)))
    for i, p in enumerate(yes):
        rows[i, p.highlight[0]] = 1
        rows[i, sizes[0] + numpy.asarray(p.highlight[1], dtype=int)] = 1
    counts = rows.sum(axis=0)
    return len(yes), [counts[:sizes[0]], counts[sizes[0]:]], rows


def pair_values(files: Sequence[CodedFile], record: Dict[str, Any], pair_id: str) -> Dict[str, float]:
    """One pair's parts of the word-level figures (module doc)."""
    k, counts, rows = pair_counts(files, pair_id)
    out = {"tp": 0.0, "model": 0.0, "gold": 0.0}
    for side, count in zip(SIDES, counts):
        gold = (2 * count >= k) & (k > 0)
        model = numpy.zeros(len(count), dtype=bool)
        model[sorted(i for i in model_words(record, side) if i < len(count))] = True
        out["tp"] += float((gold & model).sum())
        out["model"] += float(model.sum())
        out["gold"] += float(gold.sum())
        j = jaccard(gold, model)
        out[f"jaccard_{side}"] = 0.0 if j is None else j
        out[f"both_{side}"] = 0.0 if j is None else 1.0
    if k >= 2:
        n1 = rows.sum(axis=0)
        n0 = k - n1
        out.update(o=float((n0 * n1).sum() / (k - 1)), n0=float(n0.sum()), n1=float(n1.sum()))
    else:
        out.update(o=0.0, n0=0.0, n1=0.0)
    return out


def alpha_of_totals(o: numpy.ndarray, n0: numpy.ndarray, n1: numpy.ndarray) -> numpy.ndarray:
    with numpy.errstate(divide="ignore", invalid="ignore"):
        return numpy.where(n0 * n1 > 0, 1 - (n0 + n1 - 1) * o / (n0 * n1), numpy.nan)


def figures(t: Dict[str, numpy.ndarray]) -> Dict[str, numpy.ndarray]:
    """The word-level figures of the totals of ``StratifiedSample.totals``
    (NaN where not defined)."""
    with numpy.errstate(divide="ignore", invalid="ignore"):
        out = {f"jaccard_{side}": t[f"jaccard_{side}"] / t[f"both_{side}"] for side in SIDES}
        out.update(precision=t["tp"] / t["model"], recall=t["tp"] / t["gold"],
                   f1=2 * t["tp"] / (t["model"] + t["gold"]),
                   krippendorff_alpha=alpha_of_totals(t["o:plain"], t["n0:plain"], t["n1:plain"]))
    return {key: numpy.where(numpy.isfinite(v), v, numpy.nan) for key, v in out.items()}


def word_matrix(files: Sequence[CodedFile], items: Sequence[str]) -> numpy.ndarray:
    """Coders x words (both turns of the pairs two coders or more called
    paraphrases): 1 / 0 from the coders who said yes, NaN from the others."""
    columns = []
    for pid in items:
        coded = [f.pairs.get(pid) for f in files]
        if sum(1 for p in coded if p is not None and p.paraphrase) < 2:
            continue
        size = [len(w) for w in next(p for p in coded if p is not None).words]
        block = numpy.full((len(files), sum(size)), numpy.nan)
        for i, p in enumerate(coded):
            if p is not None and p.paraphrase:
                block[i] = 0
                block[i, p.highlight[0]] = 1
                block[i, size[0] + numpy.asarray(p.highlight[1], dtype=int)] = 1
        columns.append(block)
    return numpy.hstack(columns) if columns else numpy.full((len(files), 0), numpy.nan)


def word_scores(files: Sequence[CodedFile], records: Dict[str, Dict[str, Any]], items: Sequence[str],
                sample: StratifiedSample, *, n_boot: int = N_BOOT, seed: int = 0,
                level: float = LEVEL) -> Dict[str, Any]:
    """The word-level figures (module doc) of the pairs ``items`` (the
    coded-file pairs, in the order of ``sample.coded``), with their intervals."""
    parts = [pair_values(files, records[pid], pid) for pid in items]
    values = {key: [p[key] for p in parts] for key in parts[0]}
    point, draws = sample.totals(values, n_boot=n_boot, seed=seed)

    at, resampled = figures(point), None if draws is None else figures(draws)
    why_not = NOT_ESTIMABLE if sample.k < 2 else "not estimable: no coded pair"

    def entry(key: str) -> Dict[str, Any]:
        return _interval(at[key][0], None if resampled is None else resampled[key], level, why_not)

    matrix = word_matrix(files, items)
    alpha = entry("krippendorff_alpha")
    # the value from the maintained package (equal to the totals' formula, which the resamples use)
    alpha["value"] = krippendorff_alpha(matrix)
    return {
        "coders": [f.coder for f in files],
        "pairs": len(items),
        "gold": GOLD,
        "agreement": {"krippendorff_alpha": dict(alpha, words=int(matrix.shape[1]),
                                                 pairs=int(sum(1 for p in parts if p["n0"] + p["n1"] > 0)))},
        "model_vs_majority": {
            **{f"jaccard_{side}": dict(entry(f"jaccard_{side}"), pairs=int(sum(p[f"both_{side}"] for p in parts)))
               for side in SIDES},
            **{key: entry(key) for key in ("precision", "recall", "f1")}},
    }
