"""The look of the pictures: the word shade, the inline CSS and the inline
event handler that lights up linked spans. Nothing is fetched at view time."""
import math

SHADE_RGB = (255, 176, 0)  # a highlighter amber; black text stays readable on it at full shade
# The "decision" scale draws the words of a pair the model does not call a
# paraphrase in grey, at MUTED_STRENGTH of their opacity: where the model's
# probability sat stays readable, but nothing there looks like a highlight.
MUTED_RGB = (128, 128, 128)
MUTED_STRENGTH = 1 / 3


def shade_color(value: float, scale: float = 1.0, muted: bool = False) -> str:
    """The CSS background colour of a word whose value is ``value``: the shade
    colour with opacity min(1, value / scale), ``scale`` > 0 being the value
    that gets the full shade ("transparent" for NaN); ``muted``: grey at
    MUTED_STRENGTH of that opacity."""
    if math.isnan(value):
        return "transparent"
    r, g, b = MUTED_RGB if muted else SHADE_RGB
    opacity = min(1.0, max(0.0, value / scale)) * (MUTED_STRENGTH if muted else 1.0)
    return f"rgba({r}, {g}, {b}, {opacity:.3f})"


# How probabilities become shades (render's ``shade_scale`` option, the
# ``visualize --shade-scale`` option). "decision" (the default): opacity = p on
# every pair, amber in a pair the model calls a paraphrase and muted grey
# (MUTED_RGB, MUTED_STRENGTH) in a pair it does not, so the shade, the decision
# and the outlines (drawn only in pairs that pass) tell one story. The others
# scale amber by opacity = min(1, p / scale) whatever the decision, the scale
# being the page's highest probability ("page_max"), the pair's ("pair_max"),
# the turn's ("turn_max"), or a fixed number in (0, 1]. The scale is the same
# for every word of a turn, so within a turn a paler word is always a less
# probable one.
SHADE_SCALES = ("decision", "page_max", "pair_max", "turn_max")
DEFAULT_SHADE_SCALE = "decision"


def check_shade_scale(scale) -> object:
    """``scale`` if it is one of ``SHADE_SCALES`` or a number in (0, 1]
    (a numeric string such as "0.5" becomes the number); else ValueError."""
    if isinstance(scale, str):
        if scale in SHADE_SCALES:
            return scale
        try:
            scale = float(scale)
        except ValueError:
            raise ValueError(
                f"Unknown shade scale {scale!r}: choose one of {SHADE_SCALES} or a number in (0, 1]."
            ) from None
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0 < scale <= 1:
        raise ValueError(f"The shade scale must be one of {SHADE_SCALES} or a number in (0, 1], got {scale!r}.")
    return float(scale)


CSS = """
.spp{font-family:-apple-system,BlinkMacSystemFont,"Segoe UI",Helvetica,Arial,sans-serif;font-size:16px;line-height:1.95;color:#1b1b1b;background:#fff;text-align:left}
.spp *{box-sizing:border-box}
.spp-legend{display:flex;flex-wrap:wrap;align-items:center;gap:.25em 1.4em;font-size:13px;line-height:1.5;color:#555;margin:0 0 .8em}
.spp-scale{display:inline-block;width:110px;height:12px;border:1px solid #bbb;border-radius:3px;vertical-align:middle;margin:0 .3em;background:linear-gradient(to right,rgba(255,176,0,0),rgb(255,176,0))}
.spp-muted-scale{background:linear-gradient(to right,rgba(128,128,128,0),rgba(128,128,128,.333))}
.spp-rules{flex-basis:100%;color:#666}
.spp-rule{color:#1b1b1b}
.spp-term{font-weight:600;color:#333}
.spp-scale-note{font-weight:400;letter-spacing:0;color:#8a8a8a}
.spp-key{display:inline-block;width:2.2em;height:1.1em;border:2px solid #2b5797;border-radius:5px;vertical-align:middle}
.spp-key.spp-gold{border-style:dashed}
.spp-hatch{display:inline-block;width:1.6em;height:1.1em;vertical-align:middle;border-bottom:1px dotted #777;background-image:repeating-linear-gradient(135deg,transparent 0 3px,rgba(0,0,0,.18) 3px 4px)}
.spp-pair{border:1px solid #d9d9d9;border-radius:8px;padding:.55em .95em .75em;margin:0 0 1em}
.spp-head{display:flex;flex-wrap:wrap;align-items:baseline;gap:.2em 1.1em;font-size:14px;line-height:1.6;color:#444;margin:0 0 .45em}
.spp-id{font-weight:600;color:#1b1b1b}
.spp-badge{padding:0 .6em;border-radius:999px;font-size:12.5px;font-weight:600}
.spp-yes{background:#d5efdc;color:#17602b}
.spp-no{background:#ececec;color:#555}
.spp-note{color:#777}
.spp-turns{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:.4em 1.6em}
@media (max-width:720px){.spp-turns{grid-template-columns:minmax(0,1fr)}}
.spp-speaker{font-size:12.5px;font-weight:700;letter-spacing:.05em;line-height:1.5;color:#5f5f5f}
.spp-role{font-weight:400;letter-spacing:0;color:#8a8a8a}
.spp-text{white-space:pre-wrap;overflow-wrap:anywhere}
.spp-w{border-radius:3px;padding:.12em 0}
.spp-nan{text-decoration:underline dotted #777;background-image:repeating-linear-gradient(135deg,transparent 0 3px,rgba(0,0,0,.18) 3px 4px)}
.spp-span{background-color:transparent;color:inherit;border:2px solid #2b5797;border-radius:5px;padding:.12em .14em;-webkit-box-decoration-break:clone;box-decoration-break:clone;cursor:default;outline:none}
.spp-gold{border-style:dashed}
.spp-span:hover,.spp-span:focus,.spp-span.spp-lit{border-color:#c0165a;border-style:solid;background-color:rgba(192,22,90,.10);box-shadow:0 0 0 2px rgba(192,22,90,.28)}
"""

# One handler for mouseover/mouseout/focusin/focusout on the root element
# (inline attributes, so it also runs where <script> tags do not, e.g. HTML
# inserted into a notebook): the span under the pointer or focus and the spans
# named in its data-spp-links (the other turn's spans) get the class spp-lit.
HANDLER = (
    "var s=event.target&&event.target.closest?event.target.closest('.spp-span'):null;"
    "if(!s)return;var r=event.relatedTarget;if(r&&r.nodeType===1&&s.contains(r))return;"
    "var on=event.type==='mouseover'||event.type==='focusin';"
    "var ids=(s.getAttribute('data-spp-links')||'').split(' ').concat([s.id]);"
    "for(var i=0;i<ids.length;i++){var e=ids[i]?document.getElementById(ids[i]):null;"
    "if(e)e.classList.toggle('spp-lit',on);}"
)
HANDLER_EVENTS = ("onmouseover", "onmouseout", "onfocusin", "onfocusout")
