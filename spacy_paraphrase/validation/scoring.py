"""``validate score``: coded sheets + the records they were drawn from ->
agreement, the model's precision / recall / F1 against the coders' majority
and the corpus paraphrase rate corrected for the model's errors, each with a
95% bootstrap interval (docs/report.md, "Validation").

Every sampled pair carries the weight N_h / n_h of its stratum h (pairs of
the stratum in the corpus / coded pairs of it), so that the estimates are
the corpus', not the sample's: a stratified sample that over-draws
borderline pairs is weighted back. The intervals resample the coded pairs
within each stratum (and, for the corrected rate, the corpus' conversations
for the model's rate). The corrected rate is Rogan and Gladen's (1978):
(p + Sp - 1) / (Se + Sp - 1), p the model's rate on the corpus, Se / Sp its
sensitivity (recall) / specificity on the coded pairs, clipped to [0, 1];
not estimable when Se + Sp <= 1."""
import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import numpy

from ..report.records import read_records
from ..report.statistics import LEVEL, N_BOOT, bootstrap_ratios, cluster_bootstrap, cluster_sums
from .agreement import cohen_kappa, krippendorff_alpha, majority, percent_agreement
from .coding import SheetError, coder_names, read_sheet
from .sheet import design_path


def confusion(pred, ref, weights) -> Dict[str, Optional[float]]:
    """Weighted precision, recall (= sensitivity), specificity and F1 of 0/1
    predictions against 0/1 references (None where the denominator is 0)."""
    pred, ref, w = (numpy.asarray(x, dtype=float) for x in (pred, ref, weights))
    tp, fp = float((w * pred * ref).sum()), float((w * pred * (1 - ref)).sum())
    fn, tn = float((w * (1 - pred) * ref).sum()), float((w * (1 - pred) * (1 - ref)).sum())
    precision = tp / (tp + fp) if tp + fp > 0 else None
    recall = tp / (tp + fn) if tp + fn > 0 else None
    specificity = tn / (tn + fp) if tn + fp > 0 else None
    f1 = None
    if precision is not None and recall is not None:
        f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {"precision": precision, "recall": recall, "specificity": specificity, "f1": f1}


def rogan_gladen(p: float, sensitivity: Optional[float], specificity: Optional[float]) -> Optional[float]:
    """(p + Sp - 1) / (Se + Sp - 1) clipped to [0, 1]; None when Se + Sp <= 1."""
    if sensitivity is None or specificity is None or sensitivity + specificity <= 1:
        return None
    return float(min(1.0, max(0.0, (p + specificity - 1) / (sensitivity + specificity - 1))))


def stratified_draws(strata: Sequence[str], n_boot: int, rng) -> List[numpy.ndarray]:
    """``n_boot`` index arrays, each drawing every stratum's items with
    replacement, as many as it has."""
    groups: Dict[str, List[int]] = {}
    for i, name in enumerate(strata):
        groups.setdefault(name, []).append(i)
    arrays = [numpy.asarray(idx) for idx in groups.values()]
    return [numpy.concatenate([a[rng.integers(0, len(a), len(a))] for a in arrays]) for _ in range(n_boot)]


def _interval(value, draws: List[Optional[float]], level: float = LEVEL) -> Dict[str, Any]:
    good = numpy.asarray([d for d in draws if d is not None], dtype=float)
    out: Dict[str, Any] = {"value": value, "low": None, "high": None}
    if value is None or len(good) < 0.95 * len(draws) or len(good) == 0:
        out["note"] = "not estimable" if value is None else "interval not estimable (too few usable resamples)"
        return out
    alpha = (1 - level) / 2
    out["low"], out["high"] = (float(x) for x in numpy.quantile(good, [alpha, 1 - alpha]))
    return out


def sample_weights(strata: Sequence[str], population: Dict[str, int]) -> numpy.ndarray:
    """N_h / n_h for every item (n_h: the items of stratum h here)."""
    counts: Dict[str, int] = {}
    for name in strata:
        counts[name] = counts.get(name, 0) + 1
    return numpy.asarray([population[name] / counts[name] for name in strata], dtype=float)


def model_scores(pred, ref, strata, population, decisions, clusters, *, n_boot: int = N_BOOT,
                 seed: int = 0) -> Dict[str, Any]:
    """Precision, recall, specificity, F1, the sample-weighted rate and the
    Rogan-Gladen corrected rate, each with its bootstrap interval."""
    pred, ref = numpy.asarray(pred, dtype=float), numpy.asarray(ref, dtype=float)
    w = sample_weights(strata, population)
    point = confusion(pred, ref, w)
    observed = cluster_bootstrap(decisions, clusters, n_boot=n_boot, seed=seed)
    rng = numpy.random.default_rng(seed + 1)
    draws = stratified_draws(strata, n_boot, rng)
    stats = [confusion(pred[i], ref[i], w[i]) for i in draws]
    rates = [float((w[i] * ref[i]).sum() / w[i].sum()) for i in draws]
    # the model's corpus rate, resampled by conversation, paired with each sample draw
    p_draws: Sequence[float] = []
    if observed.conversations > 1:
        sums, counts = cluster_sums(numpy.asarray(decisions, dtype=float), clusters)
        p_draws = bootstrap_ratios(sums, counts, n_boot, rng)
    corrected = rogan_gladen(observed.rate, point["recall"], point["specificity"])
    out = {key: _interval(point[key], [s[key] for s in stats]) for key in ("precision", "recall", "specificity", "f1")}
    out["rates"] = {
        "model": {"value": observed.rate, "low": observed.low, "high": observed.high, "note": observed.note,
                  "pairs": observed.pairs, "conversations": observed.conversations},
        "sample_weighted": _interval(float((w * ref).sum() / w.sum()), rates),
        "rogan_gladen": _interval(corrected, [rogan_gladen(p, s["recall"], s["specificity"])
                                              for p, s in zip(p_draws, stats)]),
    }
    if observed.conversations < 2 and corrected is not None:
        out["rates"]["rogan_gladen"]["note"] = "interval not estimable: fewer than 2 conversations"
    return out


def find_design(sheet: Path) -> Optional[Path]:
    """SHEET.design.json beside a coded sheet, else the one ``*.design.json``
    in its folder (coders' copies are often renamed), else None."""
    if design_path(sheet).is_file():
        return design_path(sheet)
    found = sorted(Path(sheet).parent.glob("*.design.json"))
    return found[0] if len(found) == 1 else None


def _design(sheets: Sequence[Path], given: Optional[Path]) -> Optional[Dict[str, Any]]:
    path = given if given is not None else find_design(sheets[0])
    if path is None:
        return None
    try:
        design = json.loads(Path(path).read_text(encoding="utf-8"))
        design["pairs"], design["strata"]
    except OSError as err:
        raise SheetError(f"--design {path}: {err.strerror}") from None
    except (ValueError, KeyError, TypeError):
        raise SheetError(f"--design {path}: not a design file written by 'validate sheet'") from None
    design["path"] = str(path)
    return design


def score_sheets(sheets: Sequence[Path], records: Sequence[Path], *, design: Optional[Path] = None,
                 n_boot: int = N_BOOT, seed: int = 0) -> Dict[str, Any]:
    """The scores of coded sheets (module doc) as a JSON-able dict."""
    sheets = [Path(p) for p in sheets]
    data = read_records(records, words_of=set())
    by_id = data.by_id()
    scored = [r for r in data.records if isinstance(r.get("score"), (int, float))]
    names = coder_names(sheets)
    coded = [read_sheet(path, list(by_id)) for path in sheets]
    plan = _design(sheets, design)
    items = sorted({pid for labels in coded for pid in labels})
    if plan is not None:
        outside = [pid for pid in items if pid not in plan["pairs"]]
        if outside:
            raise SheetError(f"pairs not drawn in the design {plan['path']}: {', '.join(outside[:10])}"
                             + (f" and {len(outside) - 10} more" if len(outside) > 10 else ""))
        if plan.get("threshold") is not None and data.threshold is not None \
                and abs(plan["threshold"] - data.threshold) > 1e-4:
            raise SheetError(f"the design {plan['path']} was drawn from records of threshold {plan['threshold']:g}, "
                             f"these have {data.threshold:g}: give the records the sheet was drawn from")
        strata = [plan["pairs"][pid] for pid in items]
        population = {name: s["population"] for name, s in plan["strata"].items()}
        plan["uncoded"] = sorted(set(population) - set(strata))
    else:
        strata = ["all"] * len(items)
        population = {"all": len(scored)}
    matrix = numpy.full((len(sheets), len(items)), numpy.nan)
    column = {pid: j for j, pid in enumerate(items)}
    for i, labels in enumerate(coded):
        for pid, label in labels.items():
            matrix[i, column[pid]] = label
    model = numpy.asarray([float(bool(by_id[pid].get("is_paraphrase"))) for pid in items])
    ref, ties = majority(matrix)
    humans = {"coders": len(sheets), "krippendorff_alpha": krippendorff_alpha(matrix),
              "cohen_kappa": cohen_kappa(matrix[0], matrix[1]) if len(sheets) == 2 else None,
              "percent_agreement": percent_agreement(matrix)}
    decisions = [bool(r.get("is_paraphrase")) for r in scored]
    clusters = [str(r.get("conversation_id") or r["pair_id"]) for r in scored]
    against = model_scores(model, ref, strata, population, decisions, clusters, n_boot=n_boot, seed=seed)
    return {
        "records": {"sources": data.sources, "model": data.model, "threshold": data.threshold, "pairs": len(scored)},
        "design": {"path": plan["path"], "stratify": plan.get("stratify"), "strata": plan["strata"],
                   "strata_without_coded_pairs": plan["uncoded"]}
        if plan else {"path": None, "stratify": "none (no design file: a simple random sample assumed)"},
        "coders": names,
        "pairs_coded": len(items),
        "labels": int((~numpy.isnan(matrix)).sum()),
        "majority_ties": int(ties.sum()),
        "agreement": {
            "humans": humans,
            "model_vs_majority": {"cohen_kappa": cohen_kappa(model, ref)},
            "model_and_coders": {"krippendorff_alpha": krippendorff_alpha(numpy.vstack([matrix, model]))},
        },
        "model_vs_majority": against,
        "rate": against.pop("rates"),
    }
