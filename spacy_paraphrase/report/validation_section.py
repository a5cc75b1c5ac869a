"""The validation section of the report (``report --validation SCORES.json``)
and the lines ``validate score`` prints, from the scores file ``validate
score`` writes (``validation/scoring.py``)."""
from pathlib import Path
from typing import Any, Dict, List

from .page import fmt, paragraph, section, table

MAX_NAMED = 6  # coders named on the page (all are in the scores file)


def _ci(entry: Dict[str, Any]) -> str:
    if entry.get("low") is None:
        return entry.get("note") or "not estimable"
    return f"{fmt(entry['low'])} – {fmt(entry['high'])}"


def rows(scores: Dict[str, Any]) -> List[tuple]:
    """(what, value, 95% interval) of every figure of a scores file."""
    agreement = scores["agreement"]
    out = [
        ("coders", ", ".join(scores["coders"]) if len(scores["coders"]) <= MAX_NAMED
         else f"{len(scores['coders'])} ({', '.join(scores['coders'][:MAX_NAMED])}, ...)", ""),
        ("pairs coded (labels)", f"{scores['pairs_coded']} ({scores['labels']})", ""),
        ("Krippendorff's alpha, coders", fmt(agreement["humans"]["krippendorff_alpha"]), ""),
        ("Cohen's kappa, coders (two coders only)", fmt(agreement["humans"]["cohen_kappa"]), ""),
        ("agreement of coder pairs", fmt(agreement["humans"]["percent_agreement"]), ""),
        ("Cohen's kappa, model vs coders' majority", fmt(agreement["model_vs_majority"]["cohen_kappa"]), ""),
        ("Krippendorff's alpha, model among coders", fmt(agreement["model_and_coders"]["krippendorff_alpha"]), ""),
    ]
    for key in ("precision", "recall", "specificity", "f1"):
        entry = scores["model_vs_majority"][key]
        out.append((f"model {key} (majority as reference)", fmt(entry["value"]), _ci(entry)))
    rate = scores["rate"]
    out.append(("paraphrase rate, model's decisions (corpus)", fmt(rate["model"]["value"]), _ci(rate["model"])))
    out.append(("paraphrase rate, coders' majority weighted to the corpus (design-based)",
                fmt(rate["design_based"]["value"]), _ci(rate["design_based"])))
    if "rogan_gladen" in rate:
        out.append(("paraphrase rate, the model's rate corrected for its errors (Rogan-Gladen)",
                    fmt(rate["rogan_gladen"]["value"]), _ci(rate["rogan_gladen"])))
    words = scores.get("words")
    if words:
        out.append(("pairs coded with words (coded files)", f"{words['pairs']} ({len(words['coders'])} coders)", ""))
        alpha = words["agreement"]["krippendorff_alpha"]
        out.append((f"Krippendorff's alpha on words, coders ({alpha['words']} words of {alpha['pairs']} pairs "
                    "two coders or more called paraphrases)", fmt(alpha["value"]), _ci(alpha)))
        figures = words["model_vs_majority"]
        for side in ("first", "second"):
            entry = figures[f"jaccard_{side}"]
            out.append((f"model words, Jaccard with the coders' words, {side} turn (mean over {entry['pairs']} pairs "
                        "where both are non-empty)", fmt(entry["value"]), _ci(entry)))
        for key in ("precision", "recall", "f1"):
            out.append((f"model words, token {key} (coders' words as reference)", fmt(figures[key]["value"]),
                        _ci(figures[key])))
    if "mean_vote" in scores:
        for key, name in (("rate", "paraphrase rate, coders' mean vote weighted to the corpus"),
                          ("model_agreement", "model's agreement with the coders' mean vote")):
            entry = scores["mean_vote"][key]
            out.append((name, fmt(entry["value"]), _ci(entry)))
    return out


def ties_line(scores: Dict[str, Any]) -> str:
    ties = scores["ties"]
    return f"pairs with a tied vote: {ties['pairs']} (--tie {ties['rule']}: {ties['meaning']})"


def estimator_line(scores: Dict[str, Any]) -> str:
    return f"estimator: {scores['estimator']['used']} ({scores['estimator']['why']})"


def validation_section(scores: Dict[str, Any], path: Path) -> str:
    design = scores["design"]
    return section("Validation against human coders", paragraph(
        f"From {path}: {scores['pairs_coded']} pairs coded by {len(scores['coders'])} coder(s); sample design: "
        f"{design.get('stratify')}; {ties_line(scores)}; {estimator_line(scores)}."),
        table(["", "value", "95% interval"], rows(scores))
        + (paragraph(f"Words: the coders' words of a pair are {scores['words']['gold']}; the model's, those of its "
                     "highlighted spans. Pairs weighted to the corpus as for the pair figures.")
           if scores.get("words") else ""), anchor="validation")
