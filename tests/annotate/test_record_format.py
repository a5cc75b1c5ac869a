import numpy
import pytest

from spacy_paraphrase import make_pair_doc
from spacy_paraphrase.annotate import PairAnnotator, invalid_reason
from spacy_paraphrase.annotate.record_format import (RECORD_FIELDS, Decision, RecordsFileError, dumps, invalid_side,
                                                    make_record, output_files, read_records, record_decision)
from spacy_paraphrase.dialogs import Turn, TurnPair, Utterance
from spacy_paraphrase.pair_doc import PARAPHRASE_LABEL, SPANS_KEY
from spacy_paraphrase.words import word_values
from tests.annotate.helpers import check_record


def utt(uid, speaker, text):
    return Utterance(uid, "c1", speaker, text)


def make_pair(first_texts, second_texts, meta=None):
    first = [utt(f"a{i}", "ANN", t) for i, t in enumerate(first_texts)]
    second = [utt(f"b{i}", "BOB", t) for i, t in enumerate(second_texts)]
    pair = TurnPair("a0", "c1", Turn.of(first), Turn.of(second), meta or {})
    return pair, {u.id: u.text for u in first + second}


@pytest.fixture(scope="module")
def annotator(annotate_model):
    return PairAnnotator(annotate_model, batch_size=2, with_probs=True)


def test_a_turn_pairs_json_form_is_plain_json_with_offsets():
    pair, _ = make_pair(["Hello there.", "I was in Rome."], ["Rome?"], meta={"label": 1})
    data = pair.to_json()
    assert data["first"] == {"speaker": "ANN", "utterance_ids": ["a0", "a1"],
                             "text": "Hello there. I was in Rome.", "offsets": [[0, 12], [13, 27]]}
    assert data["second"]["offsets"] == [[0, 5]]
    assert data["meta"] == {"label": 1}
    assert "meta" not in make_pair(["x"], ["y"])[0].to_json()


@pytest.mark.parametrize("text,found", [("", "empty"), ("  \n", "whitespace"), ("ok\ud800", "Unicode")])
def test_invalid_reason_uses_make_pair_doc_rules(nlp, text, found):
    pair, _ = make_pair(["Fine."], [text])
    assert found in invalid_reason(pair)
    assert invalid_side(pair)[0] == "second"
    with pytest.raises(ValueError):
        make_pair_doc(nlp, pair.first.text, pair.second.text)
    assert invalid_reason(make_pair(["Fine."], ["Also fine."])[0]) is None


def test_record_spans_are_split_per_utterance(annotator):
    # thresholds 0: every token is highlighted, so each turn is one span that
    # crosses the utterance boundaries of the merged first turn
    pair, texts = make_pair(["Hello there.", "  I was  in Rome\u00a0today. ", "Ok"], ["Rome? Really!"])
    record = annotator.annotate([pair])[0]
    check_record(record, texts)
    first_spans = [s for s in record["spans"] if s["side"] == "first"]
    assert [s["utterance_id"] for s in first_spans] == ["a0", "a1", "a2"]
    assert first_spans[1]["start"] == 2 and first_spans[1]["text"] == "I was  in Rome\u00a0today."
    assert {s["label"] for s in first_spans} == {"SOURCE"}
    assert [s["label"] for s in record["spans"] if s["side"] == "second"] == [PARAPHRASE_LABEL]
    assert record["is_paraphrase"] is True
    assert record["first"]["offsets"] == pair.to_json()["first"]["offsets"]  # kept: the record decodes back
    assert list(record) == ["pair_id", "conversation_id", "first", "second", "score", "is_paraphrase",
                            "vote_share", "agreement", "margin", "spans", "words"]
    assert list(record) == [f.key for f in RECORD_FIELDS if f.key != "meta"]  # the table's order
    assert all(isinstance(record[f.key], f.type) for f in RECORD_FIELDS if f.key != "meta")


def test_word_probs_are_the_models_word_values(annotator):
    pair, texts = make_pair(["we won the game"], ["congratulations on the win"])
    doc = annotator.nlp(annotator.make_doc(pair))
    record = annotator.make_record(doc, pair)
    expected = word_values(doc, doc.spans[SPANS_KEY].attrs["token_probs"])
    got = [w["prob"] for side in ("first", "second") for w in record["words"][side]]
    numpy.testing.assert_allclose(got, expected, rtol=1e-6)
    check_record(record, texts)


def test_records_come_back_in_the_pairs_order(annotator):
    pairs = [make_pair(["x " * n + "end"], ["reply"])[0] for n in (9, 1, 5, 0)]
    pairs = [TurnPair(f"p{i}", p.conversation_id, p.first, p.second) for i, p in enumerate(pairs)]
    records = annotator.annotate(pairs)
    assert [r["pair_id"] for r in records] == ["p0", "p1", "p2", "p3"]
    assert [r["first"]["text"] for r in records] == [p.first.text for p in pairs]


def test_the_decision_and_the_margin_are_the_readouts(annotator):
    pair, _ = make_pair(["we won the game"], ["congratulations on the win"])
    doc = annotator.nlp(annotator.make_doc(pair))
    score = doc.cats[PARAPHRASE_LABEL]
    passes = make_record(doc, pair, annotator.readout.replace(threshold=score))
    assert passes["is_paraphrase"] is True and passes["margin"] == 0.0
    fails = make_record(doc, pair, annotator.readout.replace(threshold=score + 0.25))
    assert fails["is_paraphrase"] is False and fails["margin"] == pytest.approx(-0.25)
    record = make_record(doc, pair, annotator.readout)
    assert "words" not in record and record["margin"] == doc.spans[SPANS_KEY].attrs["margin"]


def test_record_rejects_a_doc_of_another_row(annotator):
    pair = make_pair(["we won the game"], ["congratulations"])[0]
    other = make_pair(["we lost the game"], ["congratulations"])[0]
    doc = annotator.nlp(annotator.make_doc(pair))
    with pytest.raises(ValueError, match="not built from this pair"):
        make_record(doc, other, annotator.readout)
    with pytest.raises(ValueError, match="no pair score"):
        make_record(annotator.make_doc(pair), pair, annotator.readout)


def _texts(pair):
    return [(u.id, u.text) for turn in (pair.first, pair.second) for u in turn.utterances]


def test_the_codec_carries_a_turn_pair_to_a_record_and_back(annotator, tmp_path):
    """reader -> TurnPair -> JSON -> record -> file -> record -> TurnPair: the same turns,
    utterance texts and offsets (a merged turn whose utterances hold spaces
    and a non-breaking space)."""
    pair, _ = make_pair(["Hello  there. ", "I was in\u00a0Rome."], ["Rome?", "Really"], meta={"label": 1})
    assert TurnPair.from_json(pair.to_json()) == pair
    path = tmp_path / "out.jsonl"
    path.write_bytes(dumps(annotator.annotate([pair])[0]))
    (record,) = read_records(path)
    back = TurnPair.from_json(record)
    assert _texts(back) == _texts(pair)
    assert back.first.offsets == pair.first.offsets and back.second.offsets == pair.second.offsets
    assert (back.pair_id, back.conversation_id, back.meta) == (pair.pair_id, pair.conversation_id, pair.meta)
    for span in record["spans"]:  # a span's offsets index its utterance's own text
        utterances = dict(_texts(back))
        assert utterances[span["utterance_id"]][span["start"]:span["end"]] == span["text"]


def test_output_files_know_every_kind_of_annotate_output(tmp_path):
    line = dumps({"pair_id": "p", "score": 0.5})
    (tmp_path / "out.jsonl").write_bytes(line)
    assert output_files(tmp_path / "out.jsonl")[0] == [tmp_path / "out.jsonl"]
    ray = tmp_path / "ray"
    ray.mkdir()
    for name in ("b.jsonl", "a.jsonl"):
        (ray / name).write_bytes(line)
    assert [p.name for p in output_files(ray)[0]] == ["a.jsonl", "b.jsonl"]
    kit = tmp_path / "kit"
    kit.mkdir()
    (kit / "utterances.jsonl").write_text("{}\n")
    with pytest.raises(RecordsFileError, match="--output-format convokit"):
        output_files(kit)
    (kit / "sp_annotate.records.jsonl").write_bytes(line)
    assert output_files(kit) == ([kit / "sp_annotate.records.jsonl"], kit / "sp_annotate.records.jsonl", kit)
    (tmp_path / "bad.jsonl").write_text('{"pair_id": "p", "score": 1}\n\n["x"]\n')
    with pytest.raises(RecordsFileError, match=r"bad.jsonl, line 3: not an annotate record"):
        list(read_records(tmp_path / "bad.jsonl"))


@pytest.mark.parametrize("offsets", [[[0, 5]], [[0, 5], [4, 9]], [[0, 5], [6, 99]], [[0, 5], ["6", 9]]])
def test_from_json_refuses_offsets_that_do_not_fit(offsets):
    data = make_pair(["Hello", "there"], ["x"])[0].to_json()
    data["first"]["offsets"] = offsets
    with pytest.raises(ValueError, match="the first turn: .*offsets"):
        TurnPair.from_json(data)


def test_error_entries_leave_out_lines_that_are_no_json_object(tmp_path):
    """Both readers of an errors file (the ConvoKit output's counts, the report's) read it through
    ``error_entries``: a line cut short or edited into something else is left out, not a traceback."""
    from spacy_paraphrase.annotate.record_format import error_entries

    path = tmp_path / "out.errors.jsonl"
    path.write_text('{"kind": "skipped", "conversation_id": "c1"}\n\n[1, 2]\n"text"\n'
                    '{"kind": "malformed", "line": 3}\n{"kind": "skip', encoding="utf-8")
    assert list(error_entries(path)) == [{"kind": "skipped", "conversation_id": "c1"},
                                         {"kind": "malformed", "line": 3}]


def record(score, margin=None, stored=None):
    out = {"pair_id": "p", "score": score}
    if margin is not None:
        out["margin"] = margin
    if stored is not None:
        out["is_paraphrase"] = stored
    return out


@pytest.mark.parametrize("given,threshold,expected", [
    # the pipeline's: the record keeps its decision and margin; the threshold is score - margin
    (record(0.75, 0.25, True), None, Decision(True, 0.5, 0.25)),
    (record(0.25, -0.25, False), None, Decision(False, 0.5, -0.25)),
    (record(0.5, 0.0, True), None, Decision(True, 0.5, 0.0)),  # at the threshold: a paraphrase
    (record(0.5, 0.0), None, Decision(True, 0.5, 0.0)),  # no stored decision: margin >= 0
    (record(0.5, -2.0 ** -30), None, Decision(False, 0.5 + 2.0 ** -30, -2.0 ** -30)),  # just below
    (record(0.5, 0.0, False), None, Decision(False, 0.5, 0.0)),  # the stored decision wins over the sign
    # no margin: the stored decision alone, no threshold
    (record(0.75, stored=True), None, Decision(True, None, None)),
    (record(0.75), None, Decision(None, None, None)),
    (record(None, 0.25, True), None, Decision(True, None, None)),  # no score
    (record(float("nan"), 0.25, False), None, Decision(False, None, None)),  # NaN is no score
    (record(True, 0.25, True), None, Decision(True, None, None)),  # a yes/no is no score
    # a given threshold wins, the margin measured from it
    (record(0.75, 0.25, True), 0.8, Decision(False, 0.8, 0.75 - 0.8)),
    (record(0.75, 0.25, False), 0.75, Decision(True, 0.75, 0.0)),  # at the given threshold: a paraphrase
    (record(0.75), 0.5, Decision(True, 0.5, 0.25)),  # no margin needed
    (record(None, 0.25, True), 0.5, Decision(True, None, None)),  # no score: nothing to measure
])
def test_a_records_decision_and_threshold(given, threshold, expected):
    found = record_decision(given, threshold)
    assert found == expected
    assert found.is_paraphrase is None or type(found.is_paraphrase) is bool


def test_the_decision_of_annotates_records_is_the_readouts(annotator):
    """For a record annotate writes, the one rule gives back the readout's
    decision and threshold, at the threshold and off it."""
    pair, _ = make_pair(["we won the game"], ["congratulations on the win"])
    doc = annotator.nlp(annotator.make_doc(pair))
    score = doc.cats[PARAPHRASE_LABEL]
    for threshold in (score, score + 0.25, score - 0.25, annotator.readout.threshold):
        readout = annotator.readout.replace(threshold=threshold)
        found = record_decision(make_record(doc, pair, readout))
        assert found.is_paraphrase is readout.is_paraphrase(score)
        assert found.threshold == pytest.approx(threshold, abs=1e-6)
