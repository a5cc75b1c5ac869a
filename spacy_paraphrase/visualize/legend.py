"""The page's legend and shade scales: which probability gets the full shade
(``shade_scales``) and what the shading, the span marks and the pair numbers
mean (``legend``), said only for what the page shows."""
import math
from html import escape
from typing import List, Sequence, Tuple

from .views import SHADE_PROBABILITY, SHADING_LEGEND, PairView


def shade_scales(views: Sequence[PairView], shade_scale) -> List[Tuple[float, float]]:
    """The probability that gets the full shade, per view and turn: 1 with
    ``"decision"`` (opacity = p; see ``is_muted``), the
    highest probability of the page (``"page_max"``), of the pair
    (``"pair_max"``) or of the turn (``"turn_max"``), or the fixed number
    given. A word's opacity is min(1, p / scale). Where the highest
    probability is not > 0 (nothing to shade) the scale is 1. Views shaded
    by something other than a probability (gold shares, targets) keep 1: a
    share is drawn on 0-1."""

    def top(values) -> float:
        best = max((v for v in values if not math.isnan(v)), default=0.0)
        return best if best > 0 else 1.0

    def words(view: PairView, turns=(0, 1)):
        return [w.value for t in turns for w in view.turns[t].words]

    model = [v.shading == SHADE_PROBABILITY for v in views]
    if shade_scale == "decision":
        page = 1.0
    elif not isinstance(shade_scale, str):
        page = float(shade_scale)
    else:
        page = top([x for v, m in zip(views, model) if m for x in words(v)])
    out = []
    for view, is_model in zip(views, model):
        if not is_model:
            out.append((1.0, 1.0))
        elif shade_scale == "pair_max":
            out.append((top(words(view)),) * 2)
        elif shade_scale == "turn_max":
            out.append((top(words(view, (0,))), top(words(view, (1,)))))
        else:
            out.append((page, page))
    return out


def is_muted(view: PairView, shade_scale) -> bool:
    """Whether the view's words are drawn muted (grey, paler): with the
    ``"decision"`` scale, model probabilities of a pair decided "not a
    paraphrase". A pair without a decision is drawn as one that passes."""
    return shade_scale == "decision" and view.shading == SHADE_PROBABILITY and view.decision is False


def fmt(x: float) -> str:
    """A probability as the page prints it."""
    return f"{x:.2f}" if x >= 0.1 else f"{x:.2g}"


def legend(views: Sequence[PairView], shade_scale, scales) -> str:
    items = []
    gradient = '<span class="spp-scale"></span>'
    for kind, text in SHADING_LEGEND.items():
        shaded = [n for n, v in enumerate(views) if v.shading == kind]
        if not shaded:
            continue
        lead = f"shade = {escape(text)}:"
        if kind != SHADE_PROBABILITY:
            items.append(f"<span>{lead} 0{gradient}1</span>")
        elif shade_scale == "decision":
            items.append(f"<span>{lead} 0{gradient}1 (opacity = p, the same on every pair)</span>")
            if any(is_muted(views[n], shade_scale) for n in shaded):
                items.append(
                    '<span>grey = the same probability in a pair the model does not call a paraphrase, '
                    'a third as strong: 0<span class="spp-scale spp-muted-scale"></span>1</span>'
                )
        elif shade_scale == "page_max":
            top = fmt(scales[shaded[0]][0])
            items.append(
                f"<span>{lead} 0{gradient}{top} (opacity = p &#247; {top}, the page&#8217;s highest "
                "probability)</span>"
            )
        elif shade_scale in ("pair_max", "turn_max"):
            where = "pair" if shade_scale == "pair_max" else "turn"
            items.append(
                f"<span>{lead} 0{gradient}the {where}&#8217;s highest (opacity = p &#247; the {where}&#8217;s "
                f"highest probability, shown with each {where})</span>"
            )
        else:
            top = fmt(float(shade_scale))
            how = "opacity = p" if shade_scale == 1.0 else f"opacity = min(1, p &#247; {top}), a fixed scale"
            items.append(f"<span>{lead} 0{gradient}{top} ({how})</span>")
    if any(math.isnan(w.value) for v in views for t in v.turns for w in t.words):
        items.append('<span><span class="spp-hatch"></span> no value</span>')
    if any(t.spans for v in views if not v.gold for t in v.turns):
        items.append(
            '<span><span class="spp-key"></span> predicted span: the decoded phrases of a pair that '
            "passes the threshold</span>"
        )
    if any(t.spans for v in views if v.gold for t in v.turns):
        items.append('<span><span class="spp-key spp-gold"></span> gold span</span>')
    items.append("<span>hover or focus (Tab) a span to light up the other turn&#8217;s spans</span>")
    rules = []
    term = '<span class="spp-term">{}</span>'.format
    if any(v.threshold is not None for v in views):
        rules.append(f"{term('pair score &#8805; threshold')} &#8594; paraphrase")
    if any(v.margin is not None for v in views):
        rules.append(f"{term('margin')} = pair score &#8722; threshold (near 0: a borderline call)")
    if any(v.vote_share is not None for v in views):
        rules.append(f"{term('vote share')} = predicted share of annotators who would say paraphrase")
    if any(v.agreement is not None and not v.gold for v in views):
        rules.append(
            f"{term('agreement')} = chance that two annotators agree, s&#178; + (1 &#8722; s)&#178; "
            "of the vote share s (1: all agree, 0.5: an even split)"
        )
        rules.append("vote share and agreement are weak today (a nearly flat fitted map): "
                     "sort by margin to find borderline pairs")
    if any(v.agreement is not None and v.gold for v in views):
        rules.append(f"{term('agreement')} (gold) = share of annotator pairs that agree")
    if rules:
        items.append(f'<span class="spp-rules">{" &#183; ".join(rules)}</span>')
    return f'<div class="spp-legend">{"".join(items)}</div>'
