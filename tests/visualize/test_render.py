import sys
import types

import numpy
import pytest

import spacy_paraphrase
from spacy_paraphrase import PairDocError, make_pair_doc
from spacy_paraphrase.visualize import render
from spacy_paraphrase.visualize.style import shade_color
from tests.visualize.helpers import (
    FIRST,
    SECOND,
    alpha,
    by_class,
    gold_docs,
    model_doc,
    parse,
    text_of,
)


def test_render_is_exported_from_the_package():
    assert spacy_paraphrase.render is render


def test_both_turns_with_their_speakers_and_texts():
    doc = model_doc()
    root = parse(render(doc, jupyter=False))
    turns = by_class(root, "spp-turn")
    assert [t.get("data-turn") for t in turns] == ["first", "second"]
    speakers = [text_of(by_class(t, "spp-speaker")[0]) for t in turns]
    assert speakers[0].startswith("GUEST") and speakers[1].startswith("HOST")
    # The drawn text is exactly each turn's text.
    assert [text_of(by_class(t, "spp-text")[0]) for t in turns] == [FIRST, SECOND]
    head = text_of(by_class(root, "spp-head")[0])
    # pair score = min of the turn maxima = 12 / 23; the threshold (0.3) is
    # pair score − the stored margin; no vote-share map: the share is the
    # pair score, agreement 0.52² + 0.48².
    assert "NPR-1-2" in head and "pair score 0.52 ≥ threshold 0.30 →paraphrase" in head
    assert "margin +0.22" in head and "vote share 0.52" in head and "agreement 0.50" in head


def test_one_shaded_element_per_word_in_probability_order():
    probs = numpy.random.default_rng(0).random(24).astype("float32")
    doc = model_doc(probs)
    words = by_class(parse(render(doc, jupyter=False)), "spp-w")
    assert len(words) == len(doc) == 24
    assert [text_of(w) for w in words] == [t.text for t in doc]
    values = [float(w.get("data-v")) for w in words]
    assert values == pytest.approx(probs, abs=5e-4)
    alphas = [alpha(w.get("style")) for w in words]
    # Default shade scale ("decision", a pair that passes): opacity = p.
    assert alphas == pytest.approx(probs, abs=5e-4)
    # Darker means more probable.
    order = numpy.argsort(probs)
    assert all(alphas[a] <= alphas[b] for a, b in zip(order, order[1:]))
    assert [w.get("title") for w in words[:2]] == [f"p = {probs[0]:.2f}", f"p = {probs[1]:.2f}"]
    assert words[0].get("style") == f"background-color:{shade_color(float(probs[0]))}"


def test_nan_words_are_unshaded_and_marked():
    probs = numpy.full(24, 0.9, dtype="float32")
    probs[3] = numpy.nan
    words = by_class(parse(render(model_doc(probs), jupyter=False)), "spp-w")
    nan = words[3]
    assert "spp-nan" in nan.get("class").split()
    assert nan.get("style") is None and nan.get("data-v") == "nan"
    assert "no probability" in nan.get("title")
    assert all("spp-nan" not in w.get("class") for i, w in enumerate(words) if i != 3)


def test_spans_are_outlined_and_linked_across_the_turns():
    probs = numpy.zeros(24, dtype="float32")
    probs[[4, 5, 6, 8]] = 0.9  # "my 20th time", "doing" in the first turn
    probs[[13 + 4, 13 + 5]] = 0.8  # "been doing" in the second turn
    doc = model_doc(probs)
    assert len(doc.spans["paraphrase"]) == 3
    root = parse(render(doc, jupyter=False))
    turns = by_class(root, "spp-turn")
    first, second = (by_class(t, "spp-span") for t in turns)
    assert [text_of(m) for m in first] == ["my 20th time", "doing"]
    assert [text_of(m) for m in second] == ["been doing"]
    assert all(m.tag == "mark" and m.get("tabindex") == "0" for m in first + second)
    ids = [m.get("id") for m in first + second]
    assert len(set(ids)) == 3
    for m in first:
        assert m.get("data-spp-links").split() == [second[0].get("id")]
        assert m.get("data-label") == "SOURCE" and "score 0.90" in m.get("title")
    assert second[0].get("data-spp-links").split() == [first[0].get("id"), first[1].get("id")]
    assert second[0].get("aria-describedby") == second[0].get("data-spp-links")
    # The words inside an outline keep their own shading element.
    assert len(by_class(first[0], "spp-w")) == 3
    # The root carries the (inline) hover and focus handlers.
    for event in ("onmouseover", "onmouseout", "onfocusin", "onfocusout"):
        assert "spp-lit" in root.get(event)


def test_ids_are_unique_across_pairs_and_renders():
    docs = [model_doc(), model_doc(pair_id="other")]
    html = render(docs, jupyter=False) + render(docs, jupyter=False)
    ids = [e.get("id") for e in parse(f"<div>{html}</div>").iter() if e.get("id")]
    assert len(ids) == len(set(ids)) > 4


def test_text_is_escaped():
    evil = '<script>alert(1)</script>'
    doc = model_doc(
        first='<b>bold</b> & "quoted" \'x\'',
        second="</div></section><img src=x onerror=alert(2)>",
        speakers=(evil, '"><img src=y onerror=alert(3)>'),
        pair_id="</span><script>alert(4)</script>",
    )
    html = render(doc, jupyter=False)
    for raw in ("<script", "<img", "<b>", "</b>", 'onerror=alert(2)>'):
        assert raw not in html
    root = parse(html)  # still well-formed
    turns = by_class(root, "spp-turn")
    assert text_of(by_class(turns[0], "spp-text")[0]) == doc.spans["turns"][0].text
    assert text_of(by_class(turns[1], "spp-speaker")[0]).startswith('"><img src=y')
    assert "</span><script>alert(4)</script>" in text_of(by_class(root, "spp-id")[0])


def test_page_gives_a_full_self_contained_document():
    html = render(model_doc(), page=True, jupyter=False, options={"title": "T<1>"})
    assert html.startswith("<!DOCTYPE html>")
    head, body = html.split("</head>")
    assert '<meta charset="utf-8">' in head and "<style>" in head and "<title>T&lt;1&gt;</title>" in head
    assert body.strip().endswith("</html>") and '<div class="spp"' in body
    fragment = render(model_doc(), jupyter=False)
    assert not fragment.startswith("<!DOCTYPE") and "<style>" in fragment
    for markup in (html, fragment):  # nothing fetched at view time
        for ref in ("http:", "https:", "src=", "<link", "@import", "url("):
            assert ref not in markup


def test_minify_leaves_out_layout_newlines_only():
    html = render(model_doc(), minify=True, jupyter=False)
    assert "\n" not in html
    assert text_of(by_class(parse(html), "spp-text")[0]) == FIRST


@pytest.mark.parametrize("mode", ["soft", "majority"])
def test_gold_docs_are_shaded_by_the_share_of_annotators(tmp_path, mode):
    (doc,) = gold_docs(tmp_path, mode)
    root = parse(render(doc, jupyter=False))
    words = by_class(root, "spp-w")
    assert len(words) == len(doc) == 10
    shares = {text_of(w): float(w.get("data-v")) for w in words if text_of(w).strip()}
    # 4 annotators; "week" is in both turns, the second one wins in the dict.
    assert shares["snow"] == 0.75 and shares["snowy"] == 0.75 and shares["we"] == 0.0
    assert [float(w.get("data-v")) for w in words if text_of(w) == "week"] == [0.25, 0.5]
    assert words[2].get("title").startswith("highlighted by 3 of 4 annotators")
    assert "3 of the 3 who found a paraphrase" in words[2].get("title")
    # Gold spans outlined (dashed): majority of the paraphrase-finding annotators.
    spans = by_class(root, "spp-span")
    assert [text_of(s) for s in spans] == ["snow", "snowy week"]
    assert all("spp-gold" in s.get("class").split() for s in spans)
    head = text_of(by_class(root, "spp-head")[0])
    assert "gold: paraphrase" in head and "vote share 0.75" in head and "3 of 4 annotators" in head
    assert "share of annotators" in text_of(by_class(root, "spp-legend")[0])


def test_decision_from_the_spans_or_a_given_threshold():
    low = model_doc(numpy.full(24, 0.2), pair_id="low")
    assert len(low.spans["paraphrase"]) == 0
    head = text_of(by_class(parse(render(low, jupyter=False)), "spp-head")[0])
    assert "not a paraphrase" in head and "pair score 0.20" in head
    head = text_of(by_class(parse(render(low, jupyter=False, options={"threshold": 0.1})), "spp-head")[0])
    assert "not a paraphrase" not in head and "paraphrase" in head


def test_jupyter_displays_and_returns_none(monkeypatch):
    shown = []
    display_mod = types.ModuleType("IPython.display")
    display_mod.HTML = lambda markup: ("HTML", markup)
    display_mod.display = lambda obj: shown.append(obj)
    ipython = types.ModuleType("IPython")
    ipython.display = display_mod
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", display_mod)
    doc = model_doc()
    assert render(doc, jupyter=True) is None
    assert shown[0][0] == "HTML" and 'class="tex2jax_ignore"' in shown[0][1]
    assert "spp-turn" in shown[0][1]
    monkeypatch.setattr("spacy_paraphrase.visualize.markup.is_in_jupyter", lambda: True)
    assert render(doc) is None and len(shown) == 2
    assert isinstance(render(doc, jupyter=False), str) and len(shown) == 2


def test_jupyter_without_ipython_names_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "IPython", None)  # as if IPython were not installed
    monkeypatch.setitem(sys.modules, "IPython.display", None)
    doc = model_doc()
    with pytest.raises(ImportError, match=r"pip install ipython") as raised:
        render(doc, jupyter=True)
    assert "jupyter=False" in str(raised.value)
    assert isinstance(render(doc, jupyter=False), str)  # the HTML string still works without IPython


def test_bad_input_gets_clear_errors(nlp):
    with pytest.raises(PairDocError, match="make_pair_doc"):
        render(nlp("not a pair"), jupyter=False)
    with pytest.raises(ValueError, match="Unknown option"):
        render(model_doc(), jupyter=False, options={"colours": {}})
    with pytest.raises(TypeError, match="pair Docs"):
        render([model_doc(), "text"], jupyter=False)


def test_doc_without_the_spans_key_is_drawn_plain(nlp):
    doc = make_pair_doc(nlp, "a b", "c d")
    root = parse(render(doc, jupyter=False))
    assert len(by_class(root, "spp-turn")) == 2
    assert by_class(root, "spp-w") == [] and by_class(root, "spp-span") == []
    assert "no doc.spans['paraphrase']" in text_of(by_class(root, "spp-head")[0])
