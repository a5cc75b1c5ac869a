"""The rendered page in a real browser: headless Chromium (Debian package
``chromium``) loads it with a small test script appended, and ``--dump-dom``
returns what the script measured. Skipped when no Chromium is installed."""
import html
import json
import re
import shutil
import subprocess

import numpy
import pytest

from spacy_paraphrase.visualize import render
from spacy_paraphrase.visualize.style import shade_color
from tests.util import skip_optional
from tests.visualize.helpers import model_doc

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


@pytest.fixture(scope="module")
def chromium():
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    skip_optional("no Chromium found (Debian: apt-get install -y chromium)")


def run_page(chromium, tmp_path, page: str, script: str, width: int = 1200) -> dict:
    """Load ``page`` with ``script`` appended; the script returns a JSON-able
    value, read back from the dumped DOM."""
    wrapped = (
        "<script>(function(){var out;try{out=(function(){" + script + "})();}"
        "catch(e){out={error:String(e)};}"
        "var pre=document.createElement('pre');pre.id='spp-test-result';"
        "pre.textContent=JSON.stringify(out);document.body.appendChild(pre);})();</script>"
    )
    path = tmp_path / "page.html"
    path.write_text(page.replace("</body>", wrapped + "</body>"), encoding="utf-8")
    cmd = [
        chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={width},900",
        "--dump-dom", path.as_uri(),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    match = re.search(r'<pre id="spp-test-result">(.*?)</pre>', proc.stdout, re.S)
    assert match, f"no result from Chromium (rc {proc.returncode}): {proc.stderr[-2000:]}"
    result = json.loads(html.unescape(match.group(1)))
    assert not (isinstance(result, dict) and "error" in result), result
    return result


def _rgba(css: str):
    numbers = [float(x) for x in re.findall(r"[0-9.]+", css)]
    return numbers + [1.0] if len(numbers) == 3 else numbers


def _two_pairs():
    probs = numpy.linspace(0.05, 0.45, 24).astype("float32")
    probs[[4, 5, 6, 8]] = [0.9, 0.8, 0.7, 0.6]  # SOURCE: "my 20th time", "doing"
    probs[13 + 4 : 13 + 7] = [0.75, 0.85, 0.65]  # PARAPHRASE: "been doing this"
    probs[13 + 10] = 0.1
    probs[2] = numpy.nan
    return probs, [model_doc(probs, pair_id="p1"), model_doc(probs, pair_id="p2")]


@pytest.mark.parametrize("shade_scale", ["decision", "page_max"])
def test_words_get_the_background_colour_of_their_probability(chromium, tmp_path, shade_scale):
    probs, docs = _two_pairs()
    # A third pair with the same probabilities that the model does not call a
    # paraphrase (pair score 0.85 < threshold 0.95).
    docs.append(model_doc(probs, pair_id="p3", threshold=0.95))
    page = render(docs, page=True, jupyter=False, options={"shade_scale": shade_scale})
    script = (
        "return Array.prototype.map.call(document.querySelectorAll('#spp-test-root .spp-w, .spp-pair .spp-w'),"
        "function(e){return [e.getAttribute('data-v'), getComputedStyle(e).backgroundColor];});"
    )
    measured = run_page(chromium, tmp_path, page, script)
    assert len(measured) == 3 * len(probs)
    for n, ((value, colour), p) in enumerate(zip(measured, numpy.concatenate([probs, probs, probs]))):
        if numpy.isnan(p):
            assert value == "nan" and _rgba(colour)[3] == 0.0  # no shade
            continue
        if shade_scale == "page_max":  # the page's highest probability (0.9), whatever the decision
            expected = shade_color(float(p), 0.9)
        else:  # opacity = p; the rejected pair in grey, a third as strong
            expected = shade_color(float(p), 1.0, muted=n >= 2 * len(probs))
        assert _rgba(colour) == pytest.approx(_rgba(expected), abs=0.01)


def test_hover_and_focus_light_up_the_linked_spans(chromium, tmp_path):
    _, docs = _two_pairs()
    page = render(docs, page=True, jupyter=False)
    script = """
    var pairs = document.querySelectorAll('.spp-pair');
    function state() {
      return Array.prototype.map.call(pairs, function(p) {
        return Array.prototype.map.call(p.querySelectorAll('.spp-span'), function(s) {
          return [s.closest('.spp-turn').getAttribute('data-turn'), s.classList.contains('spp-lit'),
                  getComputedStyle(s).borderTopColor];
        });
      });
    }
    var source = pairs[0].querySelector('[data-turn=first] .spp-span');
    var word = source.querySelector('.spp-w');
    var out = {before: state()};
    word.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));
    out.hover = state();
    word.dispatchEvent(new MouseEvent('mouseout', {bubbles: true, relatedTarget: document.body}));
    out.after_hover = state();
    var target = pairs[0].querySelector('[data-turn=second] .spp-span');
    target.focus();
    // A headless page without window focus may move activeElement without
    // firing focus events; send focusin as well (the handler is idempotent).
    target.dispatchEvent(new FocusEvent('focusin', {bubbles: true}));
    out.focus = state();
    target.dispatchEvent(new FocusEvent('focusout', {bubbles: true}));
    out.after_focus = state();
    return out;
    """
    out = run_page(chromium, tmp_path, page, script)
    lit_colour = [192.0, 22.0, 90.0, 1.0]
    for key in ("before", "after_hover", "after_focus"):
        assert not any(lit for pair in out[key] for _, lit, _ in pair), key
    first_pair, second_pair = out["hover"]
    # Hovering "my 20th time" lights it and the other turn's span, not the
    # other span of its own turn, nor anything in the other pair.
    assert [(turn, lit) for turn, lit, _ in first_pair] == [("first", True), ("first", False), ("second", True)]
    assert _rgba(first_pair[2][2]) == lit_colour and _rgba(first_pair[1][2]) != lit_colour
    assert not any(lit for _, lit, _ in second_pair)
    # Focusing the second turn's span (keyboard) lights every first-turn span.
    first_pair, second_pair = out["focus"]
    assert [lit for _, lit, _ in first_pair] == [True, True, True]
    assert all(_rgba(c) == lit_colour for _, _, c in first_pair)
    assert not any(lit for _, lit, _ in second_pair)


@pytest.mark.parametrize("width,side_by_side", [(1200, True), (480, False)])
def test_turns_side_by_side_or_stacked(chromium, tmp_path, width, side_by_side):
    page = render(model_doc(), page=True, jupyter=False)
    script = (
        "var t=document.querySelectorAll('.spp-turn');var a=t[0].getBoundingClientRect(),"
        "b=t[1].getBoundingClientRect();return {top: [a.top, b.top], left: [a.left, b.left], bottom: a.bottom};"
    )
    box = run_page(chromium, tmp_path, page, script, width=width)
    if side_by_side:
        assert box["top"][0] == box["top"][1] and box["left"][1] > box["left"][0]
    else:
        assert box["left"][0] == box["left"][1] and box["top"][1] >= box["bottom"]
