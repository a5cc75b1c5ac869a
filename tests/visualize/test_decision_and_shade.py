"""What the head line and the shading say: the decision threshold next to the
pair score (pair score − the stored margin, or a given threshold), margin,
vote share and agreement with their meaning, the gold agreement observed
between annotators, and the shade scale with its legend."""
import re

import numpy
import pytest
from spacy.vocab import Vocab

from spacy_paraphrase.converters.contextdep import convert_contextdep
from spacy_paraphrase.visualize import render, render_records
from spacy_paraphrase.visualize.style import MUTED_RGB, SHADE_RGB
from tests.util import HEADER, row
from tests.visualize.helpers import alpha, by_class, model_doc, parse, text_of
from tests.visualize.test_record_views import record_with_words

N1 = 13  # tokens of the first turn of model_doc; 11 in the second


def _probs(first_max: float, second_max: float, base: float = 0.05) -> numpy.ndarray:
    probs = numpy.full(24, base, dtype="float32")
    probs[[4, 5, 6]] = [first_max, first_max * 0.9, first_max * 0.8]  # "my 20th time"
    probs[[N1 + 4, N1 + 5]] = [second_max * 0.9, second_max]  # "been doing"
    return probs


def _head(html: str, n: int = 0):
    return by_class(parse(html), "spp-head")[n]


def _head_text(html: str, n: int = 0) -> str:
    return text_of(by_class(parse(html), "spp-head")[n])


def _legend(html: str) -> str:
    return text_of(by_class(parse(html), "spp-legend")[0])


def _title(head, starts: str) -> str:
    (span,) = [e for e in head.iter("span") if (e.text or "").startswith(starts)]
    return span.get("title") or ""


# --- the decision threshold, the margin ------------------------------------------


def test_threshold_is_the_pair_score_minus_the_stored_margin():
    doc = model_doc(_probs(0.4, 0.36), threshold=0.3)
    assert doc.spans["paraphrase"].attrs["margin"] == pytest.approx(0.06, abs=1e-6)
    head = _head_text(render(doc, jupyter=False))
    assert "pair score 0.36 ≥ threshold 0.30 →paraphrase" in head and "margin +0.06" in head
    doc = model_doc(_probs(0.4, 0.36), threshold=0.5)
    head = _head_text(render(doc, jupyter=False))
    assert "pair score 0.36 < threshold 0.50 →not a paraphrase" in head and "margin -0.14" in head


def test_a_given_threshold_wins_and_the_margin_is_measured_from_it():
    doc = model_doc(_probs(0.4, 0.36), threshold=0.3)
    head = _head_text(render(doc, jupyter=False, options={"threshold": 0.4}))
    assert "pair score 0.36 < threshold 0.40 →not a paraphrase" in head and "margin -0.04" in head


def test_the_decision_is_the_margin_not_the_spans():
    # The pair passes (0.36 >= 0.3) but no word reaches the absolute highlight
    # threshold 0.9: no spans. The margin still says "paraphrase".
    doc = model_doc(_probs(0.4, 0.36), threshold=0.3, highlight_threshold=0.9)
    assert len(doc.spans["paraphrase"]) == 0
    head = _head_text(render(doc, jupyter=False))
    assert "→paraphrase" in head and "not a paraphrase" not in head


def test_more_decimals_when_two_would_hide_the_difference():
    doc = model_doc(_probs(0.5, 0.304), threshold=0.3)
    assert "pair score 0.304 ≥ threshold 0.300" in _head_text(render(doc, jupyter=False))
    doc = model_doc(_probs(0.5, 0.2996), threshold=0.3)
    head = _head_text(render(doc, jupyter=False))
    assert "pair score 0.2996 < threshold 0.3000 →not a paraphrase" in head and "margin -0.0004" in head


def test_docs_without_a_margin_fall_back_to_the_spans():
    doc = model_doc(_probs(0.4, 0.36), threshold=0.3, highlight_threshold=0.9)
    del doc.spans["paraphrase"].attrs["margin"]
    html = render(doc, jupyter=False)
    head = _head_text(html)
    assert "threshold" not in head and "margin" not in head and "not a paraphrase" in head
    badge = by_class(parse(html), "spp-badge")[0]
    assert "no threshold" in badge.get("title")


def test_records_show_the_threshold_from_their_margin():
    record = {"pair_id": "R", "first": {"text": "a b", "utterance_ids": ["R-1"]}, "second": {"text": "c d", "utterance_ids": ["R-2"]},
              "score": 0.71, "is_paraphrase": True, "margin": 0.41, "vote_share": 0.6, "agreement": 0.52}
    head = _head_text(render_records(record, jupyter=False))
    assert "pair score 0.71 ≥ threshold 0.30 →paraphrase" in head and "margin +0.41" in head
    assert "vote share 0.60" in head and "agreement 0.52" in head
    head = _head_text(render_records(record, jupyter=False, options={"threshold": 0.8}))
    assert "< threshold 0.80 →not a paraphrase" in head and "margin -0.09" in head
    del record["margin"]
    head = _head_text(render_records(record, jupyter=False))
    assert "threshold" not in head and "paraphrase" in head


def test_bad_threshold_option_is_refused():
    for bad in ("0.3", True, float("nan")):
        with pytest.raises(ValueError, match="'threshold' must be a number"):
            render(model_doc(), jupyter=False, options={"threshold": bad})


# --- vote share, agreement: values and meaning -----------------------------------


def test_vote_share_and_agreement_with_their_meaning():
    doc = model_doc(_probs(0.4, 0.36), threshold=0.3)
    attrs = doc.spans["paraphrase"].attrs
    attrs["vote_share"], attrs["agreement"] = 0.8, 0.68  # as a fitted map writes them
    html = render(doc, jupyter=False)
    head = _head(html)
    assert "vote share 0.80" in text_of(head) and "agreement 0.68" in text_of(head)
    assert "Predicted share of annotators" in _title(head, "vote share")
    assert "s² + (1 − s)²" in _title(head, "agreement") and "0.5 = an even split" in _title(head, "agreement")
    assert "how far the decision is from flipping" in _title(head, "margin")
    legend = _legend(html)
    assert "margin = pair score − threshold (near 0: a borderline call)" in legend
    assert "agreement = chance that two annotators agree" in legend
    assert "vote share = predicted share of annotators" in legend
    # the model's vote share and agreement carry little today: muted, and said so
    assert "Weak today" in _title(head, "vote share") and "Weak today" in _title(head, "agreement")
    muted = {e.text.split()[0] for e in by_class(head, "spp-note")}
    assert muted == {"vote", "agreement"} and "weak today" in legend
    assert "pair score ≥ threshold → paraphrase" in legend


def test_vote_share_without_a_map_says_it_is_the_pair_score():
    doc = model_doc(_probs(0.4, 0.36), threshold=0.3)  # no map: vote_share = pair_score
    head = _head(render(doc, jupyter=False))
    assert "no vote-share map" in _title(head, "vote share")
    assert "agreement 0.54" in text_of(head)  # 0.36² + 0.64²


def _gold(tmp_path, votes):
    text = HEADER
    for a, yes in enumerate(votes):
        text += row("CNN-1-1", f"A{a}", int(yes), "we had snow", str([0, 0, int(yes)]), "so snowy", str([0, int(yes)]))
    path = tmp_path / "g.tsv"
    path.write_text(text, encoding="utf-8")
    docs, _ = convert_contextdep(path, Vocab(), mode="majority")
    return docs[0]


def test_gold_agreement_is_the_observed_share_of_agreeing_annotator_pairs(tmp_path):
    # 2 of 4 said paraphrase: of the 6 annotator pairs, 2 agree (|2s − 1| would be 0).
    html = render(_gold(tmp_path, [1, 1, 0, 0]), jupyter=False)
    head = _head(html)
    assert "vote share 0.50" in text_of(head) and "agreement 0.33" in text_of(head)
    assert "annotator pairs that agree" in _title(head, "agreement")
    assert "agreement (gold) = share of annotator pairs that agree" in _legend(html)
    # 1 of 5: (0 + 4·3) / 20 = 0.6 (|2s − 1| would be 0.6 too), 2 of 5: 0.4 (not 0.2).
    assert "agreement 0.40" in _head_text(render(_gold(tmp_path, [1, 1, 0, 0, 0]), jupyter=False))
    # One annotator: no agreement.
    assert "agreement" not in _head_text(render(_gold(tmp_path, [1]), jupyter=False))


# --- the shade scale ---------------------------------------------------------------


def _alphas(html: str, pair: int = 0):
    section = by_class(parse(html), "spp-pair")[pair]
    return [[alpha(w.get("style")) for w in by_class(t, "spp-w")] for t in by_class(section, "spp-turn")]


def _colours(html: str, pair: int = 0):
    """(rgb, alpha) of each word of a pair, both turns in order."""
    section = by_class(parse(html), "spp-pair")[pair]
    out = []
    for w in by_class(section, "spp-w"):
        match = re.search(r"rgba\((\d+), (\d+), (\d+), ([0-9.]+)\)", w.get("style"))
        out.append((tuple(int(x) for x in match.groups()[:3]), float(match.group(4))))
    return out


def test_default_scale_is_the_probability_with_rejected_pairs_muted():
    """Opacity = p on every pair; a pair decided "no" (here with higher
    probabilities than the accepted one) is grey and a third as strong, so
    none of its words is drawn as strongly as the accepted pair's outlined
    words, nor in their colour."""
    yes, no = _probs(0.5, 0.45), _probs(0.9, 0.2)  # pair scores 0.45 and 0.2
    docs = [model_doc(yes, pair_id="yes", threshold=0.3), model_doc(no, pair_id="no", threshold=0.3)]
    html = render(docs, jupyter=False)
    accepted, rejected = _colours(html, 0), _colours(html, 1)
    assert [a for _, a in accepted] == pytest.approx(yes, abs=2e-3)
    assert {rgb for rgb, _ in accepted} == {SHADE_RGB}
    assert [a for _, a in rejected] == pytest.approx(no / 3, abs=2e-3)
    assert {rgb for rgb, _ in rejected} == {MUTED_RGB}
    section = by_class(parse(html), "spp-pair")[0]
    outlined = [alpha(w.get("style")) for m in by_class(section, "spp-span") for w in by_class(m, "spp-w")]
    assert outlined and max(a for _, a in rejected) < min(outlined)
    assert not by_class(by_class(parse(html), "spp-pair")[1], "spp-span")  # no outline either
    legend = _legend(html)
    assert "opacity = p, the same on every pair" in legend and "grey = the same probability" in legend
    # The old scale, asked for, shades the rejected pair's 0.9 at full amber.
    old = _colours(render(docs, jupyter=False, options={"shade_scale": "page_max"}), 1)
    assert max(a for _, a in old) == 1.0 and {rgb for rgb, _ in old} == {SHADE_RGB}


def test_a_rejected_pair_alone_is_not_drawn_as_highlights():
    """High probabilities in a pair decided "no", alone on a page (a Doc and
    a record with words): grey, at most a third of full shade."""
    probs = _probs(0.95, 0.9)
    doc = model_doc(probs, threshold=0.95)  # pair score 0.9 < 0.95
    assert doc.spans["paraphrase"].attrs["margin"] < 0
    record = record_with_words()
    record["is_paraphrase"], record["spans"] = False, []
    record_probs = [w["prob"] for side in ("first", "second") for w in record["words"][side]]
    for html, p in ((render(doc, jupyter=False), probs), (render_records(record, jupyter=False), record_probs)):
        colours = _colours(html)
        assert {rgb for rgb, _ in colours} == {MUTED_RGB}
        assert [a for _, a in colours] == pytest.approx(numpy.asarray(p) / 3, abs=2e-3)
        assert "not a paraphrase" in _head_text(html)
    record["is_paraphrase"] = True  # the same words in a pair called a paraphrase: amber, opacity = p
    colours = _colours(render_records(record, jupyter=False))
    assert {rgb for rgb, _ in colours} == {SHADE_RGB} and [a for _, a in colours] == pytest.approx(record_probs)


def test_page_max_scale_is_the_pages_highest_probability():
    a, b = _probs(0.4, 0.36), _probs(0.2, 0.18)
    html = render([model_doc(a, pair_id="a"), model_doc(b, pair_id="b")], jupyter=False,
                  options={"shade_scale": "page_max"})
    for n, probs in enumerate((a, b)):
        got = _alphas(html, n)
        assert got[0] + got[1] == pytest.approx(probs / 0.4, abs=2e-3)
    assert max(_alphas(html, 0)[0]) == 1.0 and max(_alphas(html, 1)[0]) == pytest.approx(0.5, abs=2e-3)
    legend = _legend(html)
    assert "0.40 (opacity = p ÷ 0.40, the page’s highest probability)" in legend


@pytest.mark.parametrize("scale", ["pair_max", "turn_max"])
def test_pair_and_turn_scales(scale):
    a, b = _probs(0.4, 0.2), _probs(0.3, 0.25)
    html = render([model_doc(a, pair_id="a"), model_doc(b, pair_id="b")], jupyter=False,
                  options={"shade_scale": scale})
    for n, probs in enumerate((a, b)):
        first, second = _alphas(html, n)
        tops = (probs.max(), probs.max()) if scale == "pair_max" else (probs[:N1].max(), probs[N1:].max())
        assert first == pytest.approx(probs[:N1] / tops[0], abs=2e-3)
        assert second == pytest.approx(probs[N1:] / tops[1], abs=2e-3)
    where = "pair" if scale == "pair_max" else "turn"
    assert f"opacity = p ÷ the {where}’s highest probability" in _legend(html)
    if scale == "pair_max":
        assert "full shade at p = 0.40" in _head_text(html, 0) and "full shade at p = 0.30" in _head_text(html, 1)
    else:
        speakers = [text_of(s) for s in by_class(parse(html), "spp-speaker")]
        assert [s.split("= ")[-1] for s in speakers] == ["0.40", "0.20", "0.30", "0.25"]


@pytest.mark.parametrize("scale,legend", [(0.5, "opacity = min(1, p ÷ 0.50), a fixed scale"),
                                          ("0.5", "a fixed scale"), (1, "(opacity = p)")])
def test_fixed_scale(scale, legend):
    probs = _probs(0.8, 0.3)
    html = render(model_doc(probs), jupyter=False, options={"shade_scale": scale})
    first, second = _alphas(html)
    top = float(scale)
    assert first + second == pytest.approx(numpy.minimum(1.0, probs / top), abs=2e-3)
    assert legend in _legend(html)


@pytest.mark.parametrize("bad", ["big", 0, 1.5, -0.1, True, None])
def test_bad_shade_scale_is_refused(bad):
    with pytest.raises(ValueError, match="shade scale"):
        render(model_doc(), jupyter=False, options={"shade_scale": bad})


def test_gold_shares_are_not_scaled_next_to_model_output(tmp_path):
    gold = _gold(tmp_path, [1, 1, 0, 0])  # "snow", "snowy": share 0.5
    html = render([model_doc(_probs(0.2, 0.2)), gold], jupyter=False, options={"shade_scale": "page_max"})
    assert max(_alphas(html, 0)[0]) == 1.0  # the model's 0.2 is the page's highest
    gold_alphas = _alphas(html, 1)
    assert max(gold_alphas[0]) == 0.5 and max(gold_alphas[1]) == 0.5
    legend = _legend(html)
    assert "share of annotators who highlighted the word (gold): 01" in legend


def test_no_probability_at_all_gets_scale_one():
    probs = numpy.zeros(24, dtype="float32")
    html = render(model_doc(probs), jupyter=False, options={"shade_scale": "page_max"})
    assert all(a == 0.0 for t in _alphas(html) for a in t)
    assert "0.00 (opacity" not in _legend(html) and "1.00 (opacity = p ÷ 1.00" in _legend(html)


@pytest.mark.parametrize("shade_scale", ["decision", "page_max", "pair_max", "turn_max", 0.3, 1.0])
@pytest.mark.parametrize("highlight_scale,cut", [("turn_max", 0.6), ("absolute", 0.12)])
def test_an_outlined_word_is_never_paler_than_a_word_left_out_of_its_turn(shade_scale, highlight_scale, cut):
    rng = numpy.random.default_rng(3)
    probs = rng.uniform(0.0, 0.25, 24).astype("float32")
    probs[N1:] *= 0.6  # the turns' maxima differ
    docs = [model_doc(probs, threshold=0.05, highlight_threshold=cut, highlight_scale=highlight_scale),
            model_doc(_probs(0.9, 0.5), threshold=0.05, highlight_threshold=cut, highlight_scale=highlight_scale)]
    html = render(docs, jupyter=False, options={"shade_scale": shade_scale})
    n_checked = 0
    for section in by_class(parse(html), "spp-pair"):
        for turn in by_class(section, "spp-turn"):
            inside = {id(w) for m in by_class(turn, "spp-span") for w in by_class(m, "spp-w")}
            words = by_class(turn, "spp-w")
            lit = [alpha(w.get("style")) for w in words if id(w) in inside]
            plain = [alpha(w.get("style")) for w in words if id(w) not in inside]
            assert lit and plain
            assert min(lit) >= max(plain)
            n_checked += 1
    assert n_checked == 4
