"""HTML for pair views, and the ``render`` entry points (displaCy's calling
conventions: ``page``, ``minify``, ``jupyter``, ``options``)."""
import math
import uuid
from html import escape
from typing import Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from spacy.tokens import Doc
from spacy.util import is_in_jupyter

from .records import pair_view_from_record
from .style import CSS, HANDLER, HANDLER_EVENTS, shade_color
from .views import SHADING_LEGEND, Mark, PairView, TurnView, pair_view_from_doc

OPTIONS = {
    "spans_key": "span group of the spans and token_probs (default 'paraphrase')",
    "cats_key": "doc.cats key of the pair score (default 'PARAPHRASE')",
    "threshold": "decide 'paraphrase' as score >= threshold (default: the spans / the record say)",
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
    html = render_views(views, page=page, minify=minify, title=opts.get("title"))
    if jupyter or (jupyter is None and is_in_jupyter()):
        from IPython.display import HTML, display

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
    return opts


def _view(item, index: int, opts: dict) -> PairView:
    if isinstance(item, Doc):
        return pair_view_from_doc(
            item,
            index,
            spans_key=opts.get("spans_key", "paraphrase"),
            cats_key=opts.get("cats_key", "PARAPHRASE"),
            threshold=opts.get("threshold"),
        )
    if isinstance(item, Mapping):
        return pair_view_from_record(item, index, threshold=opts.get("threshold"))
    raise TypeError(
        f"Cannot render a {type(item).__name__}: pass pair Docs (make_pair_doc) or annotate "
        "records (dicts)."
    )


def render_views(
    views: Sequence[PairView], *, page: bool = False, minify: bool = False, title: Optional[str] = None
) -> str:
    """The HTML of already built pair views (one call = one root element)."""
    sep = "" if minify else "\n"
    uid = uuid.uuid4().hex[:8]
    handlers = " ".join(f'{name}="{escape(HANDLER)}"' for name in HANDLER_EVENTS)
    body = [f'<div class="spp" id="spp-{uid}" {handlers}>']
    if not page:
        body.append(_style(minify))
    if views:
        body.append(_legend(views))
    body.extend(_pair(view, f"spp-{uid}-{n}", sep) for n, view in enumerate(views))
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


def _legend(views: Sequence[PairView]) -> str:
    items = []
    kinds = [text for kind, text in SHADING_LEGEND.items() if any(v.shading == kind for v in views)]
    if kinds:
        shade = " &#183; ".join(escape(text) for text in kinds)
        items.append(f'<span><span class="spp-scale"></span> shade 0&#8211;1: {shade}</span>')
    if any(math.isnan(w.value) for v in views for t in v.turns for w in t.words):
        items.append('<span><span class="spp-hatch"></span> no value</span>')
    if any(t.spans for v in views if not v.gold for t in v.turns):
        items.append('<span><span class="spp-key"></span> predicted span</span>')
    if any(t.spans for v in views if v.gold for t in v.turns):
        items.append('<span><span class="spp-key spp-gold"></span> gold span</span>')
    items.append("<span>hover or focus (Tab) a span to light up the other turn's spans</span>")
    return f'<div class="spp-legend">{"".join(items)}</div>'


def _pair(view: PairView, pid: str, sep: str) -> str:
    clusters = [_clusters(turn.spans) for turn in view.turns]
    ids = [[f"{pid}-{t}-{k}" for k in range(len(c))] for t, c in enumerate(clusters)]
    turns = []
    for t, (turn, role) in enumerate(zip(view.turns, ("first", "second"))):
        text = _text(turn, clusters[t], ids[t], ids[1 - t], view.gold)
        attrs = f' lang="{escape(view.lang)}"' if view.lang else ""
        attrs += ' dir="rtl"' if view.direction == "rtl" else ""
        turns.append(
            f'<div class="spp-turn" data-turn="{role}">'
            f'<div class="spp-speaker">{escape(turn.speaker)} <span class="spp-role">· {role} turn</span></div>'
            f'<div class="spp-text"{attrs}>{text}</div></div>'
        )
    return sep.join(
        [
            f'<section class="spp-pair" id="{pid}" aria-label="pair {escape(view.pair_id)}">',
            _head(view),
            '<div class="spp-turns">',
            *turns,
            "</div>",
            "</section>",
        ]
    )


def _head(view: PairView) -> str:
    parts = [f'<span class="spp-id">{escape(view.pair_id)}</span>']
    if view.decision is not None:
        word = "paraphrase" if view.decision else "not a paraphrase"
        word = f"gold: {word}" if view.gold else word
        parts.append(f'<span class="spp-badge {"spp-yes" if view.decision else "spp-no"}">{word}</span>')
    if view.score is not None:
        parts.append(f"<span>{escape(view.score_name)} {view.score:.2f}</span>")
    if view.agreement is not None:
        parts.append(
            '<span title="|2 &#215; vote share &#8722; 1|: 1 = a clear call, 0 = contested">'
            f"agreement {view.agreement:.2f}</span>"
        )
    parts.extend(f'<span class="spp-note">{escape(note)}</span>' for note in view.notes)
    return f'<div class="spp-head">{"".join(parts)}</div>'


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


def _text(turn: TurnView, clusters, own_ids: List[str], other_ids: List[str], gold: bool) -> str:
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
        inner = _words(text, words, segments[i:j])
        out.append(inner if c is None else _span_tag(clusters[c][2], own_ids[c], other_ids, gold) + inner + "</mark>")
        i = j
    return "".join(out)


def _words(text: str, words, segments) -> str:
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
            out.append(_word_tag(words[w], piece))
        i = j
    return "".join(out)


def _word_tag(word, piece: str) -> str:
    if math.isnan(word.value):
        return f'<span class="spp-w spp-nan" data-v="nan" title="{escape(word.title)}">{piece}</span>'
    return (
        f'<span class="spp-w" data-v="{word.value:.3f}" style="background-color:{shade_color(word.value)}" '
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


__all__ = ["render", "render_records", "render_views", "OPTIONS"]
