import copy

import numpy
import pytest
import spacy

from spacy_paraphrase import make_pair_doc
from spacy_paraphrase.annotate.record_format import RECORD_FIELDS, RecordField, make_record
from spacy_paraphrase.dialogs import TurnPair
from spacy_paraphrase.paraphrase_spans.readout import Readout
from tests.annotate.helpers import rename_record_keys, with_renamed_keys
from tests.util import write_paraphrase_annotations
from spacy_paraphrase.visualize import render, render_records
from spacy_paraphrase.visualize import record_views
from spacy_paraphrase.visualize.record_views import pair_view_from_record
from tests.visualize.helpers import by_class, model_doc, parse, text_of


def _words(utterances):
    """The 'words' entries of a turn made of (utterance_id, text) pieces."""
    out = []
    for uid, text in utterances:
        start = 0
        for word in text.split(" "):
            out.append({"utterance_id": uid, "start": start, "end": start + len(word), "text": word,
                        "prob": round(0.1 * (len(out) % 10), 1)})
            start += len(word) + 1
    return out


FIRST = [("C-6", "Well, thanks."), ("C-7", "It was my 20th time here.")]
SECOND = [("C-8", "You have done this often.")]


def record_with_words():
    return {
        "pair_id": "C-7/C-8",
        "conversation_id": "C",
        "first": {"speaker": "GUEST", "utterance_ids": ["C-6", "C-7"], "text": "Well, thanks. It was my 20th time here.",
                  "offsets": [[0, 13], [14, 39]]},
        "second": {"speaker": "HOST", "utterance_ids": ["C-8"], "text": "You have done this often."},
        "score": 0.71, "is_paraphrase": True, "vote_share": 0.71, "agreement": 0.42,
        "spans": [
            {"side": "first", "label": "SOURCE", "utterance_id": "C-7", "start": 7, "end": 19, "text": "my 20th time", "score": 0.6},
            {"side": "second", "label": "PARAPHRASE", "utterance_id": "C-8", "start": 9, "end": 24, "text": "done this often", "score": 0.7},
        ],
        "words": {"first": _words(FIRST), "second": _words(SECOND)},
    }


def record_without_words():
    return {
        "pair_id": "D-2/D-4",
        "first": {"speaker": "GUEST", "utterance_ids": ["D-1", "D-2"], "text": "Yes. Yes. I agree with you.",
                  "offsets": [[0, 4], [5, 27]]},
        "second": {"speaker": "HOST", "utterance_ids": ["D-3", "D-4"], "text": "We are done for today.",
                   "offsets": [[0, 11], [12, 22]]},
        "score": 0.4, "is_paraphrase": False, "vote_share": 0.4, "agreement": 0.2,
        "spans": [
            # "Yes." is also the whole first utterance: the span must land on the second one.
            {"side": "first", "label": "SOURCE", "utterance_id": "D-2", "start": 0, "end": 4, "text": "Yes."},
            # One span cut at the utterance boundary, written as two.
            {"side": "second", "label": "PARAPHRASE", "utterance_id": "D-3", "start": 7, "end": 11, "text": "done", "score": 0.5},
            {"side": "second", "label": "PARAPHRASE", "utterance_id": "D-4", "start": 0, "end": 9, "text": "for today", "score": 0.8},
        ],
    }


def test_record_with_words_shades_every_word_and_outlines_spans():
    root = parse(render_records([record_with_words()], jupyter=False))
    turns = by_class(root, "spp-turn")
    assert text_of(by_class(turns[0], "spp-text")[0]) == "Well, thanks. It was my 20th time here."
    words = by_class(turns[0], "spp-w")
    assert [text_of(w) for w in words] == "Well, thanks. It was my 20th time here.".split(" ")
    assert [float(w.get("data-v")) for w in words] == pytest.approx([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7])
    assert [text_of(s) for s in by_class(turns[0], "spp-span")] == ["my 20th time"]
    (paraphrase,) = by_class(turns[1], "spp-span")
    assert text_of(paraphrase) == "done this often"
    assert paraphrase.get("data-spp-links") == by_class(turns[0], "spp-span")[0].get("id")
    head = text_of(by_class(root, "spp-head")[0])
    assert "C-7/C-8" in head and "pair score 0.71" in head and "agreement 0.42" in head
    assert "conversation C" in head and "not a paraphrase" not in head


def test_record_without_words_outlines_spans_by_character_offsets():
    root = parse(render(record_without_words(), jupyter=False))
    assert by_class(root, "spp-w") == []
    first, second = by_class(root, "spp-turn")
    (yes,) = by_class(first, "spp-span")
    assert text_of(yes) == "Yes."
    # The outline sits on the second "Yes." (the second utterance): the first
    # one is plain text before it.
    assert by_class(first, "spp-text")[0].text == "Yes. "
    assert yes.tail == " I agree with you."
    (joined,) = by_class(second, "spp-span")
    assert text_of(joined) == "done for today"
    assert "score 0.71" in joined.get("title")  # length-weighted mean of 0.5 (4 chars) and 0.8 (9)
    assert "not a paraphrase" in text_of(by_class(root, "spp-head")[0])


def test_spans_are_placed_at_the_kept_offsets_not_where_their_text_first_occurs():
    record = {
        "pair_id": "E", "score": 0.5,
        "first": {"utterance_ids": ["E-1", "E-2", "E-3"], "text": "I agree. Yes it is. it is.",
                  "offsets": [[0, 8], [9, 19], [20, 26]]},
        "second": {"utterance_ids": ["E-4"], "text": "ok"},
        "spans": [
            {"side": "first", "utterance_id": "E-3", "start": 0, "end": 6, "text": "it is."},
            {"side": "first", "utterance_id": "E-2", "start": 0, "end": 6, "text": "Yes it"},
        ],
    }
    text = by_class(parse(render_records(record, jupyter=False)), "spp-text")[0]
    first, last = by_class(text, "spp-span")
    # "it is." of E-3 is the last one (20:26), not the one inside E-2 (13:19)
    assert text.text == "I agree. " and first.tail == " is. " and last.tail is None
    assert [text_of(m) for m in (first, last)] == ["Yes it", "it is."]
    assert [m.get("title") for m in (first, last)] == ["SOURCE span"] * 2


def test_records_and_docs_render_together():
    root = parse(render([model_doc(), record_with_words()], jupyter=False))
    assert len(by_class(root, "spp-pair")) == 2


def test_record_text_is_escaped():
    record = record_without_words()
    record["pair_id"] = "<script>alert(1)</script>"
    record["first"]["speaker"] = '"><img src=x onerror=alert(1)>'
    record["second"]["text"] = "We are done for today.<img src=x>"
    html = render_records(record, jupyter=False)
    assert "<script" not in html and "<img" not in html
    assert "We are done for today.<img src=x>" == text_of(by_class(parse(html), "spp-text")[1])


@pytest.mark.parametrize(
    "change,message",
    [
        (lambda r: r["spans"][0].update(text="nope"), "does not match"),
        (lambda r: r["spans"][0].update(side="third"), "'side' must be"),
        (lambda r: r["spans"][0].update(utterance_id="X-1"), "not one of"),
        (lambda r: r["spans"][0].pop("end"), "integer 'start' and 'end'"),
        (lambda r: r["words"]["first"].pop(), "whitespace words"),
        (lambda r: r["first"].pop("text"), "'text' string"),
    ],
)
def test_bad_records_get_clear_errors(change, message):
    record = copy.deepcopy(record_with_words())
    change(record)
    with pytest.raises(ValueError, match=message) as err:
        render_records([record], jupyter=False)
    assert "C-7/C-8" in str(err.value)


@pytest.mark.parametrize(
    "offsets,message",
    [
        (None, "2 utterance ids but no offsets"),
        ([[0, 4]], "2 utterance ids but 1 offsets"),
        ([[5, 27], [0, 4]], "not ordered"),
        ([[0, 4], [5, 99]], "not ordered"),
        ([[0, 4], [6, 27]], "does not match"),  # fits the text, but the span "Yes." is not there
    ],
)
def test_a_merged_turn_needs_offsets_that_fit_it(offsets, message):
    record = record_without_words()
    record["first"]["offsets"] = offsets
    with pytest.raises(ValueError, match=message) as err:
        render_records(record, jupyter=False)
    assert "D-2/D-4" in str(err.value)


def test_a_word_at_another_place_than_its_offsets_say_is_refused():
    record = record_with_words()
    record["words"]["first"][3]["start"] += 1  # "was", offset 3 of C-7 (at 17 in the turn)
    with pytest.raises(ValueError, match="word 'was' is at character 17"):
        render_records(record, jupyter=False)


def test_a_span_past_its_utterance_or_twice_given_ids_are_refused():
    record = record_without_words()
    # 0:5 of D-3 "We are done" would reach over the joining space into D-4
    record["second"]["offsets"] = [[0, 3], [4, 22]]
    record["second"]["utterance_ids"] = ["D-3", "D-4"]
    record["spans"][1:] = [{"side": "second", "utterance_id": "D-3", "start": 0, "end": 5}]
    with pytest.raises(ValueError, match="does not match"):
        render_records(record, jupyter=False)
    record = record_without_words()
    record["first"]["utterance_ids"] = ["D-1", "D-1"]
    with pytest.raises(ValueError, match="given twice"):
        render_records(record, jupyter=False)


def test_render_records_takes_dicts_only():
    with pytest.raises(ValueError, match="takes dicts"):
        render_records([record_with_words(), model_doc()], jupyter=False)


@pytest.mark.parametrize("with_probs", [True, False])
def test_records_written_by_annotate_render_back(with_probs):
    row = {
        "pair_id": "C-7/C-8",
        "conversation_id": "C",
        "first": {"speaker": "GUEST", "utterance_ids": ["C-6", "C-7"],
                  "text": "Well, thanks. It was my 20th time here.", "offsets": [[0, 13], [14, 39]]},
        "second": {"speaker": "HOST", "utterance_ids": ["C-8"], "text": "You have done this often.",
                   "offsets": [[0, 25]]},
    }
    nlp = spacy.blank("en")
    doc = make_pair_doc(nlp, row["first"]["text"], row["second"]["text"], speakers=("GUEST", "HOST"))
    probs = numpy.zeros(len(doc), dtype="float32")
    probs[[2, 3, 4]] = 0.9  # "thanks. It": one span across the utterance boundary
    probs[[6, 7, 8]] = 0.8  # "my 20th time"
    probs[[11 + 2, 11 + 3, 11 + 4]] = 0.7  # "done this often"
    write_paraphrase_annotations(doc, probs, spans_key="paraphrase", cats_key="PARAPHRASE",
                                 threshold=0.3, highlight_threshold=0.5)
    record = make_record(doc, TurnPair.from_json(row), Readout(threshold=0.3), with_probs=with_probs)
    assert [s["text"] for s in record["spans"]][:2] == ["thanks.", "It"]  # written as two
    root = parse(render_records(record, jupyter=False))
    first, second = by_class(root, "spp-turn")
    assert [text_of(m) for m in by_class(first, "spp-span")] == ["thanks. It", "my 20th time"]
    assert [text_of(m) for m in by_class(second, "spp-span")] == ["done this often"]
    words = by_class(first, "spp-w")
    if with_probs:
        assert [text_of(w) for w in words] == row["first"]["text"].split(" ")
        assert [float(w.get("data-v")) for w in words] == pytest.approx([0, 0.9, 0.9, 0, 0.8, 0.8, 0.8, 0])
    else:
        assert words == []


def test_the_view_reads_the_records_keys_from_record_fields(monkeypatch):
    # a key renamed in RECORD_FIELDS is renamed for the view too: it reads no key of its own
    record = dict(record_with_words(), margin=0.21, meta={"program": "P"})
    expected = pair_view_from_record(record)
    assert expected.margin == 0.21 and expected.notes == ["conversation C"]
    rename_record_keys(monkeypatch)
    assert pair_view_from_record(with_renamed_keys(record)) == expected
    with pytest.raises(ValueError, match="annotate record 1: 'renamed_first' must be an object"):
        pair_view_from_record(record)  # the old keys are not read any more


def test_a_field_added_to_record_fields_is_seen_by_the_view(monkeypatch):
    record = dict(record_with_words(), model_version="v2")
    assert pair_view_from_record(record).notes == ["conversation C"]  # not a field of the record: not read
    added = RecordField("model_version", str, lambda s: "v2")
    monkeypatch.setattr(record_views, "RECORD_FIELDS", RECORD_FIELDS + (added,))  # the table as the view reads it
    assert pair_view_from_record(record).notes == ["conversation C", "model_version v2"]
