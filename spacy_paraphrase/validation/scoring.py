"""``validate score``: coded sheets (CSV) and coded files of the coding page
(JSON, ``coded.py``) + the records they were drawn from ->
agreement among the coders and with the model, the model's precision /
recall / specificity / F1 against the coders' reference and the corpus'
paraphrase rate, each with a 95% interval (the estimators and their
intervals: estimators.py; docs/report.md, "Validation").

The design (``validate sheet --design-out``) is given explicitly
(``--design``; ``--design none``: the coded pairs are a simple random sample
of the records): it is never looked for beside the sheets, which the coders
hold. The strata of the corpus' pairs are recomputed from the records and
must match the design's counts. The coded files also give the word-level
figures (``word_scores.py``), under ``words``."""
import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import numpy

from ..report.records import read_records_and_runs
from ..report.statistics import N_BOOT, cluster_bootstrap
from .agreement import cohen_kappa, krippendorff_alpha, majority, mean_vote, percent_agreement
from .coded import is_coded_file, read_coded_files
from .coding import SheetError, coder_names, read_sheet
from .estimators import StratifiedSample
from .sheet import stratum
from .word_scores import word_scores
from .words import turn_words
from ..annotate.record_format import CONVERSATION_ID, PAIR_ID, SCORE, record_decision

BY_MODEL = ("margin", "decision")  # strata that are the model's decisions (or finer)
WHY = {
    "design-based": "the sample is stratified by the model's output: the coders' labels weighted back to the "
                    "corpus by stratum; the Rogan-Gladen correction would equal it exactly (the weighted count "
                    "of the model's positives is the corpus' count), so it is not reported",
    "census": "every pair of the corpus was coded: the coders' rate is the corpus' own, and the Rogan-Gladen "
              "correction would equal it exactly, so it is not reported",
    "both": "the sample was drawn without regard to the model's output: the coders' labels (design-based) and "
            "the model's corpus rate corrected by its sensitivity and specificity (Rogan-Gladen) are both valid; "
            "the corrected rate uses all pairs' decisions and is the narrower when the model is good",
}
TIE_NOTE = {"half": "a tie counts as half a paraphrase", "exclude": "tied pairs are left out (as if missing at random "
            "within their stratum)", "paraphrase": "a tie counts as paraphrase",
            "not-paraphrase": "a tie counts as not paraphrase (as ContextDeP's gold)"}


def _design(path: Path) -> Dict[str, Any]:
    try:
        design = json.loads(Path(path).read_text(encoding="utf-8"))
        design["pairs"], design["strata"], design["stratify"]
    except OSError as err:
        raise SheetError(f"--design {path}: {err.strerror}") from None
    except (ValueError, KeyError, TypeError):
        raise SheetError(f"--design {path}: not a design file written by 'validate sheet'") from None
    design["path"] = str(path)
    return design


def _strata(plan: Optional[Dict[str, Any]], scored: Sequence[Dict[str, Any]], items: Sequence[str],
            threshold: Optional[float]) -> List[str]:
    """Every scored record's stratum (recomputed from the records and checked
    against the design)."""
    if plan is None:
        return ["all"] * len(scored)
    where = f"the design {plan['path']}"
    outside = [pid for pid in items if pid not in plan["pairs"]]
    if outside:
        raise SheetError(f"pairs not drawn in {where}: {', '.join(outside[:10])}"
                         + (f" and {len(outside) - 10} more" if len(outside) > 10 else ""))
    if plan.get("threshold") is not None and threshold is not None and abs(plan["threshold"] - threshold) > 1e-4:
        raise SheetError(f"{where} was drawn from records of threshold {plan['threshold']:g}, "
                         f"these have {threshold:g}: give the records the sheet was drawn from")
    strata = [stratum(r, plan["stratify"]) for r in scored]
    counts = {name: strata.count(name) for name in set(strata)}
    design_counts = {name: s["population"] for name, s in plan["strata"].items()}
    if counts != design_counts:
        differ = sorted(set(counts) | set(design_counts), key=str)
        shown = "; ".join(f"{h}: {design_counts.get(h, 0)} vs {counts.get(h, 0)}" for h in differ
                          if design_counts.get(h, 0) != counts.get(h, 0))
        raise SheetError(f"{where} was drawn from other records (pairs per stratum, design vs these: {shown}): "
                         "give the records the sheet was drawn from")
    return strata


def check_words(files, by_id: Dict[str, Dict[str, Any]]) -> None:
    """SheetError for a coded pair that is not in the records or whose
    words are not those of the record's turns (a file of other records)."""
    for f in files:
        for pid, pair in f.pairs.items():
            record = by_id.get(pid)
            if record is None:
                raise SheetError(f"{f.path}: pair {pid} is not in the records (a file of another sheet?)")
            for side, words in zip(("first", "second"), pair.words):
                if turn_words(record[side].get("text") or "") != words:
                    raise SheetError(f"{f.path}: pair {pid}: the words of the {side} turn differ from the "
                                     "records' (a file of another sheet, or other records)")


def score_sheets(sheets: Sequence[Path], records: Sequence[Path], *, design: Optional[Path] = None,
                 tie: str = "half", n_boot: int = N_BOOT, seed: int = 0) -> Dict[str, Any]:
    """The scores of coded sheets (module doc) as a JSON-able dict; design
    None: the coded pairs are a simple random sample of the records."""
    sheets = [Path(p) for p in sheets]
    data = read_records_and_runs(records, words_of=set())
    by_id = data.by_id()
    scored = [r for r in data.records if isinstance(r.get(SCORE.key), (int, float))]
    plan = _design(Path(design)) if design is not None else None
    files = read_coded_files([p for p in sheets if is_coded_file(p)], plan.get("sheet_id") if plan else None)
    check_words(files, by_id)
    from_file = {f.path: f for f in files}
    names = coder_names([p for p in sheets if not is_coded_file(p)])
    names = [from_file[p].coder if p in from_file else names.pop(0) for p in sheets]
    if len(set(names)) < len(names):
        raise SheetError("two coded sheets of the same coder: " + ", ".join(map(str, sheets)))
    coded = [{pid: int(c.paraphrase) for pid, c in from_file[path].pairs.items()} if path in from_file
             else read_sheet(path, list(by_id)) for path in sheets]
    items = sorted({pid for labels in coded for pid in labels})
    strata = _strata(plan, scored, items, data.threshold)
    matrix = numpy.full((len(sheets), len(items)), numpy.nan)
    column = {pid: j for j, pid in enumerate(items)}
    for i, labels in enumerate(coded):
        for pid, label in labels.items():
            matrix[i, column[pid]] = label
    model = numpy.asarray([float(bool(record_decision(by_id[pid]).is_paraphrase)) for pid in items])
    try:
        ref, ties = majority(matrix, tie)
    except ValueError as err:
        raise SheetError(str(err)) from None
    soft = mean_vote(matrix)
    decisions = [float(bool(record_decision(r).is_paraphrase)) for r in scored]
    clusters = [str(r.get(CONVERSATION_ID.key) or r[PAIR_ID.key]) for r in scored]
    row = {str(r[PAIR_ID.key]): i for i, r in enumerate(scored)}
    sample = StratifiedSample(clusters, strata, decisions, [row[pid] for pid in items])
    hard = sample.estimate(ref, n_boot=n_boot, seed=seed)
    usable = {strata[row[pid]] for pid, y in zip(items, ref) if not numpy.isnan(y)}  # tied pairs may be excluded
    census = {str(r[PAIR_ID.key]) for r in scored} <= set(items)
    why = "census" if census else "design-based" if plan is not None and plan["stratify"] in BY_MODEL else "both"
    with_rg = why == "both"
    observed = cluster_bootstrap(decisions, clusters, n_boot=n_boot, seed=seed)
    rate: Dict[str, Any] = {
        "model": {"value": observed.rate, "low": observed.low, "high": observed.high, "note": observed.note,
                  "pairs": observed.pairs, "conversations": observed.conversations},
        "design_based": hard["rate"]}
    if with_rg:
        rate["rogan_gladen"] = hard["rogan_gladen"]
    out: Dict[str, Any] = {
        "records": {"sources": data.sources, "model": data.model, "threshold": data.threshold, "pairs": len(scored)},
        "design": {"path": plan["path"], "stratify": plan["stratify"], "strata": plan["strata"],
                   "strata_without_coded_pairs": sorted(set(plan["strata"]) - usable)}
        if plan else {"path": None, "stratify": "none (--design none: a simple random sample of the records)"},
        "estimator": {"used": "design-based and Rogan-Gladen" if with_rg else "design-based", "why": WHY[why]},
        "coders": names,
        "pairs_coded": len(items),
        "labels": int((~numpy.isnan(matrix)).sum()),
        "ties": {"rule": tie, "pairs": int(ties.sum()), "meaning": TIE_NOTE[tie]},
        "agreement": {
            "humans": {"coders": len(sheets), "krippendorff_alpha": krippendorff_alpha(matrix),
                       "cohen_kappa": cohen_kappa(matrix[0], matrix[1]) if len(sheets) == 2 else None,
                       "percent_agreement": percent_agreement(matrix)},
            "model_vs_majority": {"cohen_kappa": cohen_kappa(model, numpy.where(numpy.isin(ref, (0.0, 1.0)), ref, numpy.nan))},
            "model_and_coders": {"krippendorff_alpha": krippendorff_alpha(numpy.vstack([matrix, model]))},
        },
        "model_vs_majority": {key: hard[key] for key in ("precision", "recall", "specificity", "f1")},
        "rate": rate,
    }
    if files:
        word_items = [pid for pid in items if any(pid in f.pairs for f in files)]
        words_sample = StratifiedSample(clusters, strata, decisions, [row[pid] for pid in word_items])
        out["words"] = word_scores(files, by_id, word_items, words_sample, n_boot=n_boot, seed=seed)
    # the mean vote differs from the majority only with three coders or more, or ties not counted as half
    if (~numpy.isnan(matrix)).sum(axis=0).max(initial=0) > 2 or tie != "half":
        mean = sample.estimate(soft, n_boot=n_boot, seed=seed)
        out["mean_vote"] = {"rate": mean["rate"], "model_agreement": mean["accuracy"]}
    return out
