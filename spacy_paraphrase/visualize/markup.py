"""HTML for pair views, and the ``render`` entry points (displaCy's calling
conventions: ``page``, ``minify``, ``jupyter``, ``options``)."""
import math
import uuid
from html import escape
from typing import Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from spacy.tokens import Doc
from spacy.util import is_in_jupyter

from ..pair_doc import PARAPHRASE_LABEL, SPANS_KEY
from .record_views import pair_view_from_record
from .style import CSS, DEFAULT_SHADE_SCALE, HANDLER, HANDLER_EVENTS, check_shade_scale, shade_color
from .legend import fmt, is_muted, legend, shade_scales
from .views import SHADE_PROBABILITY, Mark, PairView, TurnView, pair_view_from_doc

OPTIONS = {
    "spans_key": f"span group of the spans and token_probs (default {SPANS_KEY!r})",
    "cats_key": f"doc.cats key of the pair score (default {PARAPHRASE_LABEL!r})",
    "threshold": "decide 'paraphrase' as pair score >= threshold (default: pair score − the stored margin)",
    "shade_scale": "how probabilities are shaded: 'decision' (default: opacity = p, grey and paler in a pair "
    "that is not a paraphrase), or the probability that gets the full shade: 'page_max', 'pair_max', "
    "'turn_max' or a number in (0, 1]",
    "title": "the page's <title> with page=True",
}
Renderable = Union[Doc, Mapping]


def render(
    docs: Union[Renderable, Iterable[Renderable]],
    *,
    page: bool = False,
    jupyter: Optional[bool] = None,
    minify: bool = False,
    options: Optional[Mapping] = None,
) -> Optional[str]:
    """HTML of pair Docs (processed, or converted gold Docs) and/or annotate
    records, side by side per pair, like ``displacy.render``: a full page with
    ``page=True``; in a notebook (``jupyter=True`` or detected) the HTML is
    displayed and None returned. ``options``: see ``OPTIONS``.
    See docs/visualize.md."""
    opts = _check_options(options)
    items = [docs] if isinstance(docs, (Doc, Mapping)) else list(docs)
    views = [_view(item, i, opts) for i, item in enumerate(items)]
    html = render_views(
        views, page=page, minify=minify, title=opts.get("title"),
        shade_scale=opts.get("shade_scale", DEFAULT_SHADE_SCALE),
    )
    if jupyter or (jupyter is None and is_in_jupyter()):
        try:
            from IPython.display import HTML, display
        except ImportError:
            raise ImportError(
                "render(jupyter=True) shows the HTML in a notebook and needs IPython: "
                "pip install ipython (or pass jupyter=False to get the HTML as a string)."
            ) from None
        # Like displaCy: the wrapper keeps MathJax away from dollar signs in the text.
        display(HTML(f'<span class="tex2jax_ignore">{html}</span>'))
        return None
    return html


def render_records(
    records: Union[Mapping, Iterable[Mapping]],
    *,
    page: bool = False,
    jupyter: Optional[bool] = None,
    minify: bool = False,
    options: Optional[Mapping] = None,
) -> Optional[str]:
    """``render`` for annotate records (dicts, e.g. from ``srsly.read_jsonl``)."""
    items = [records] if isinstance(records, Mapping) else list(records)
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise ValueError(f"render_records takes dicts; item {i} is a {type(item).__name__}.")
    return render(items, page=page, jupyter=jupyter, minify=minify, options=options)


def _check_options(options: Optional[Mapping]) -> dict:
    opts = dict(options or {})
    unknown = sorted(set(opts) - set(OPTIONS))
    if unknown:
        raise ValueError(f"Unknown option(s) {unknown}; known: {sorted(OPTIONS)}.")
    if "shade_scale" in opts:
        opts["shade_scale"] = check_shade_scale(opts["shade_scale"])
    threshold = opts.get("threshold")
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))
                                  or math.isnan(threshold)):
        raise ValueError(f"Option 'threshold' must be a number, got {threshold!r}.")
    return opts


def _view(item, index: int, opts: dict) -> PairView:
    if isinstance(item, Doc):
        return pair_view_from_doc(
            item,
            index,
            spans_key=opts.get("spans_key", SPANS_KEY),
            cats_key=opts.get("cats_key", PARAPHRASE_LABEL),
            threshold=opts.get("threshold"),
        )
    if isinstance(item, Mapping):
        return pair_view_from_record(item, index, threshold=opts.get("threshold"))
    raise TypeError(
        f"Cannot render a {type(item).__name__}: pass pair Docs (make_pair_doc) or annotate "
        "records (dicts)."
    )


def render_views(
    views: Sequence[PairView],
    *,
    page: bool = False,
    minify: bool = False,
    title: Optional[str] = None,
    shade_scale=DEFAULT_SHADE_SCALE,
) -> str:
    """The HTML of already built pair views (one call = one root element).
    ``shade_scale``: see ``shade_scales``."""
    shade_scale = check_shade_scale(shade_scale)
    scales = shade_scales(views, shade_scale)
    sep = "" if minify else "\n"
    uid = uuid.uuid4().hex[:8]
    handlers = " ".join(f'{name}="{escape(HANDLER)}"' for name in HANDLER_EVENTS)
    body = [f'<div class="spp" id="spp-{uid}" {handlers}>']
    if not page:
        body.append(_style(minify))
    if views:
        body.append(legend(views, shade_scale, scales))
    body.extend(
        _pair(view, f"spp-{uid}-{n}", sep, scales[n], shade_scale) for n, view in enumerate(views)
    )
    body.append("</div>")
    markup = sep.join(body)
    if not page:
        return markup
    lang = next((v.lang for v in views if v.lang), "")
    head = [
        "<!DOCTYPE html>",
        f'<html lang="{escape(lang)}">' if lang else "<html>",
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title or 'spacy-paraphrase')}</title>",
        _style(minify),
        "</head>",
        '<body style="margin:1.5rem;background:#fff">',
    ]
    return sep.join(head + [markup, "</body>", "</html>"])


def _style(minify: bool) -> str:
    css = CSS.strip()
    return f"<style>{css.replace(chr(10), '') if minify else chr(10) + css + chr(10)}</style>"


def _pair(view: PairView, pid: str, sep: str, scales: Tuple[float, float], shade_scale) -> str:
    clusters = [_clusters(turn.spans) for turn in view.turns]
    ids = [[f"{pid}-{t}-{k}" for k in range(len(c))] for t, c in enumerate(clusters)]
    turns = []
    for t, (turn, role) in enumerate(zip(view.turns, ("first", "second"))):
        text = _text(turn, clusters[t], ids[t], ids[1 - t], view.gold, scales[t], is_muted(view, shade_scale))
        attrs = f' lang="{escape(view.lang)}"' if view.lang else ""
        attrs += ' dir="rtl"' if view.direction == "rtl" else ""
        note = ""
        if shade_scale == "turn_max" and view.shading == SHADE_PROBABILITY and turn.words:
            note = f' <span class="spp-scale-note">· full shade at p = {fmt(scales[t])}</span>'
        turns.append(
            f'<div class="spp-turn" data-turn="{role}">'
            f'<div class="spp-speaker">{escape(turn.speaker)} <span class="spp-role">· {role} turn</span>{note}</div>'
            f'<div class="spp-text"{attrs}>{text}</div></div>'
        )
    return sep.join(
        [
            f'<section class="spp-pair" id="{pid}" aria-label="pair {escape(view.pair_id)}">',
            _head(view, scales[0] if shade_scale == "pair_max" and view.shading == SHADE_PROBABILITY else None),
            '<div class="spp-turns">',
            *turns,
            "</div>",
            "</section>",
        ]
    )


TITLES = {
    "rule": "The pair is called a paraphrase when its pair score (the lower of the two turns' "
    "highest word probabilities) reaches the pipeline's pair threshold.",
    "rule_unknown": "The Doc keeps no threshold nor margin: the decision is read from the spans "
    "(the component writes spans only for pairs that pass).",
    "margin": "pair score − threshold: how far the decision is from flipping; near 0 = borderline.",
    "vote_share": "Predicted share of annotators who would call the pair a paraphrase (the "
    "pipeline's fitted vote-share map).",
    "vote_share_fallback": "The pipeline has no vote-share map: this is the pair score itself, "
    "not a fitted share.",
    "agreement": "Chance that two annotators agree on the pair: s² + (1 − s)² of the vote share s. "
    "1 = all would agree, 0.5 = an even split.",
    "agreement_gold": "Share of the pair's annotator pairs that agree on it (k of n said "
    "paraphrase: (k(k−1) + (n−k)(n−k−1)) / (n(n−1))). 1 = all agree.",
    "gold_share": "Share of the pair's annotators who called it a paraphrase.",
}
WEAK = (" Weak today: the fitted vote-share map is nearly flat (0.46-0.56 on ContextDeP dev), so this does "
        "not find contested pairs; the margin finds borderline ones.")


def _digits(a: float, b: float) -> int:
    """Decimals that show ``a`` and ``b`` apart (2 to 4)."""
    for d in (2, 3, 4):
        if f"{a:.{d}f}" != f"{b:.{d}f}":
            return d
    return 4


def _head(view: PairView, pair_scale: Optional[float] = None) -> str:
    parts = [f'<span class="spp-id">{escape(view.pair_id)}</span>']
    badge = ""
    if view.decision is not None:
        word = "paraphrase" if view.decision else "not a paraphrase"
        word = f"gold: {word}" if view.gold else word
        badge = f'<span class="spp-badge {"spp-yes" if view.decision else "spp-no"}">{word}</span>'
    if view.score is not None and view.threshold is not None:
        d = _digits(view.score, view.threshold)
        sign = "&#8805;" if view.score >= view.threshold else "&lt;"
        parts.append(
            f'<span class="spp-rule" title="{escape(TITLES["rule"])}">{escape(view.score_name)} '
            f"{view.score:.{d}f} {sign} threshold {view.threshold:.{d}f} &#8594;</span>"
        )
        parts.append(badge)
        if view.margin is not None:
            parts.append(f'<span title="{escape(TITLES["margin"])}">margin {view.margin:+.{d}f}</span>')
    else:
        if view.gold and view.score is not None and view.score_name == "vote share":
            parts.append(badge)
            parts.append(f'<span title="{escape(TITLES["gold_share"])}">vote share {view.score:.2f}</span>')
        else:
            if view.score is not None:
                parts.append(f"<span>{escape(view.score_name)} {view.score:.2f}</span>")
            if badge and not view.gold and view.shading == SHADE_PROBABILITY:
                badge = badge.replace("<span ", f'<span title="{escape(TITLES["rule_unknown"])}" ', 1)
            parts.append(badge)
        if view.margin is not None:
            parts.append(f'<span title="{escape(TITLES["margin"])}">margin {view.margin:+.2f}</span>')
    # the model's vote share and agreement are shown muted: they carry little today (WEAK)
    muted = "" if view.gold else ' class="spp-note"'
    if view.vote_share is not None:
        fallback = view.score is not None and view.vote_share == view.score
        title = TITLES["vote_share_fallback" if fallback else "vote_share"] + ("" if view.gold else WEAK)
        parts.append(f'<span{muted} title="{escape(title)}">vote share {view.vote_share:.2f}</span>')
    if view.agreement is not None:
        title = TITLES["agreement_gold"] if view.gold else TITLES["agreement"] + WEAK
        parts.append(f'<span{muted} title="{escape(title)}">agreement {view.agreement:.2f}</span>')
    if pair_scale is not None:
        parts.append(f'<span class="spp-note">full shade at p = {fmt(pair_scale)}</span>')
    parts.extend(f'<span class="spp-note">{escape(note)}</span>' for note in view.notes)
    return f'<div class="spp-head">{"".join(p for p in parts if p)}</div>'


def _clusters(marks: List[Mark]) -> List[Tuple[int, int, List[Mark]]]:
    """Spans of one turn as non-overlapping outlines: overlapping spans (only
    possible with a hand-made span group) share one outline."""
    out: List[Tuple[int, int, List[Mark]]] = []
    for mark in sorted((m for m in marks if m.end > m.start), key=lambda m: (m.start, m.end)):
        if out and mark.start < out[-1][1]:
            start, end, group = out[-1]
            out[-1] = (start, max(end, mark.end), group + [mark])
        else:
            out.append((mark.start, mark.end, [mark]))
    return out


def _text(turn: TurnView, clusters, own_ids: List[str], other_ids: List[str], gold: bool, scale: float,
          muted: bool = False) -> str:
    text = turn.text
    words = sorted((w for w in turn.words if w.end > w.start), key=lambda w: w.start)
    cuts = {0, len(text)}
    cuts.update(x for w in words for x in (w.start, w.end))
    cuts.update(x for c in clusters for x in (c[0], c[1]))
    points = sorted(x for x in cuts if 0 <= x <= len(text))
    segments = []  # (start, end, word index or None, cluster index or None)
    wi = ci = 0
    for a, b in zip(points, points[1:]):
        while wi < len(words) and words[wi].end <= a:
            wi += 1
        while ci < len(clusters) and clusters[ci][1] <= a:
            ci += 1
        w = wi if wi < len(words) and words[wi].start <= a else None
        c = ci if ci < len(clusters) and clusters[ci][0] <= a else None
        segments.append((a, b, w, c))
    out = []
    i = 0
    while i < len(segments):
        c = segments[i][3]
        j = i
        while j < len(segments) and segments[j][3] == c:
            j += 1
        inner = _words(text, words, segments[i:j], scale, muted)
        out.append(inner if c is None else _span_tag(clusters[c][2], own_ids[c], other_ids, gold) + inner + "</mark>")
        i = j
    return "".join(out)


def _words(text: str, words, segments, scale: float, muted: bool) -> str:
    out = []
    i = 0
    while i < len(segments):
        w = segments[i][2]
        j = i + 1
        while w is not None and j < len(segments) and segments[j][2] == w:
            j += 1
        piece = escape(text[segments[i][0] : segments[j - 1][1]])
        if w is None:
            out.append(piece)
        else:
            out.append(_word_tag(words[w], piece, scale, muted))
        i = j
    return "".join(out)


def _word_tag(word, piece: str, scale: float, muted: bool) -> str:
    if math.isnan(word.value):
        return f'<span class="spp-w spp-nan" data-v="nan" title="{escape(word.title)}">{piece}</span>'
    return (
        f'<span class="spp-w" data-v="{word.value:.3f}" style="background-color:{shade_color(word.value, scale, muted)}" '
        f'title="{escape(word.title)}">{piece}</span>'
    )


def _span_tag(marks: List[Mark], own_id: str, other_ids: List[str], gold: bool) -> str:
    kind = "gold span" if gold else "span"
    titles = [
        f"{m.label} {kind}" + (f", score {m.score:.2f}" if m.score is not None else "") for m in marks
    ]
    links = " ".join(other_ids)
    linked = f' data-spp-links="{links}" aria-describedby="{links}"' if links else ""
    cls = "spp-span spp-gold" if gold else "spp-span"
    return (
        f'<mark class="{cls}" id="{own_id}" tabindex="0" data-label="{escape(marks[0].label)}"'
        f'{linked} title="{escape("; ".join(titles))}">'
    )


__all__ = ["render", "render_records", "render_views", "shade_scales", "OPTIONS"]
