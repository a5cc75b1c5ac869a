import math

import numpy
import pytest
import spacy
import srsly
from spacy.tokens import DocBin
from spacy.training import Example

from spacy_paraphrase import make_pair_doc
from spacy_paraphrase.paraphrase_spans.readout import Readout

from .helpers import GUEST, HOST, answer, require

require("spacy_llm", "the LLM task")
require("rapidfuzz", "fuzzy quote alignment")

from spacy_paraphrase.llm.readout import llm_details, score_paraphrase_llm  # noqa: E402
from spacy_paraphrase.llm.task import LLMPairWarning  # noqa: E402

# the guest quote leaves out "daryn" (fuzzy in the guest turn, a looser match in the host turn)
YES = answer(True, ["we are coming back to a normal winter"], ["Coming back to a normal winter"])
YES_SHORT = answer(True, ["normal winter"], ["normal winter"])
NO = answer(False)


def replay_nlp(tmp_path, records, factory="llm", **task):
    path = tmp_path / "rec.jsonl"
    srsly.write_jsonl(path, records)
    nlp = spacy.blank("en")
    nlp.add_pipe(factory, config={
        "task": {"@llm_tasks": "spacy_paraphrase.ContextDeP.v1", **task},
        "model": {"@llm_models": "spacy_paraphrase.Replay.v1", "path": str(path)},
    })
    return nlp


def test_contract_from_votes(tmp_path):
    nlp = replay_nlp(tmp_path, [{"match": "Coming back", "texts": [YES, YES_SHORT, NO]}])
    doc = nlp(make_pair_doc(nlp, GUEST, HOST))
    group = doc.spans["paraphrase"]
    share = 2 / 3
    assert doc.cats["PARAPHRASE"] == pytest.approx(share)
    assert group.attrs["pair_score"] == pytest.approx(share)
    probs = group.attrs["token_probs"]
    assert probs.dtype == numpy.float32 and probs.shape == (len(doc),)
    words = [t.text for t in doc]
    # "normal winter" is quoted by both yes-samples, "coming back" by one, of 3 samples
    assert probs[words.index("normal")] == pytest.approx(2 / 3)
    assert probs[words.index("daryn")] == pytest.approx(1 / 3)
    assert probs[words.index("think")] == 0
    # highlight_threshold 0.5: "normal winter" on both sides
    assert [(s.label_, s.text) for s in group] == [("SOURCE", "normal winter"), ("PARAPHRASE", "normal winter")]
    # vote_share / agreement exactly as the shared Readout writes them for this pair score
    ref = make_pair_doc(nlp, GUEST, HOST)
    Readout().annotate(ref, numpy.full((len(ref),), share, dtype="float32"))
    for key in ("vote_share", "agreement"):
        assert group.attrs[key] == pytest.approx(ref.spans["paraphrase"].attrs[key])
    details = group.attrs["llm"]
    assert (details["n_yes"], details["n_no"], details["n_unparsed"]) == (2, 1, 0)
    assert details["quote_status"] == {"aligned_fuzzy": 1, "aligned_exact": 3}


def test_unparsed_samples_are_counted_not_read_as_no(tmp_path):
    nlp = replay_nlp(tmp_path, [{"match": "", "texts": [YES, NO, "I am not sure what"]}])
    doc = nlp(make_pair_doc(nlp, GUEST, HOST))
    details = llm_details(doc)
    assert (details["n_yes"], details["n_no"], details["n_unparsed"]) == (1, 1, 1)
    assert doc.cats["PARAPHRASE"] == pytest.approx(0.5)
    assert details["problems"] == {"no_answer": 1}


def test_failed_request_is_reported_not_a_no(tmp_path):
    nlp = replay_nlp(tmp_path, [{"match": "", "error": "HTTP 500 (after 5 attempt(s))"}])
    with pytest.warns(LLMPairWarning, match="1 of 1 pairs"):
        doc = nlp(make_pair_doc(nlp, GUEST, HOST))
    group = doc.spans["paraphrase"]
    assert math.isnan(doc.cats["PARAPHRASE"]) and len(group) == 0
    assert numpy.isnan(group.attrs["token_probs"]).all()
    assert group.attrs["llm"]["error"].startswith("HTTP 500")


def test_all_unparsed_is_nan(tmp_path):
    nlp = replay_nlp(tmp_path, [{"match": "", "texts": ["??", "!!"]}])
    with pytest.warns(LLMPairWarning):
        doc = nlp(make_pair_doc(nlp, GUEST, HOST))
    assert math.isnan(doc.cats["PARAPHRASE"]) and llm_details(doc)["n_unparsed"] == 2


def test_wrong_turn_quote_kept_in_the_turn_it_is_in(tmp_path):
    a, b = "The flight was coming from Brazil.", "That is what the airline says, OK."
    wrong = answer(True, ["That is what"], ["the airline says"])  # the guest quote is the host's
    nlp = replay_nlp(tmp_path, [{"match": "", "texts": [wrong]}])
    doc = nlp(make_pair_doc(nlp, a, b))
    statuses = [q["status"] for q in llm_details(doc)["samples"][0]["quotes"]]
    assert statuses == ["other_turn", "aligned"]
    assert [(s.label_, s.text) for s in doc.spans["paraphrase"]] == [("PARAPHRASE", "That is what the airline says")]
    nlp = replay_nlp(tmp_path, [{"match": "", "texts": [wrong]}], use_other_turn=False)
    doc = nlp(make_pair_doc(nlp, a, b))
    assert [q["status"] for q in llm_details(doc)["samples"][0]["quotes"]] == ["other_turn", "aligned"]
    assert [(s.label_, s.text) for s in doc.spans["paraphrase"]] == [("PARAPHRASE", "the airline says")]


def test_short_evidence_setting_reaches_the_alignment_and_is_saved(tmp_path):
    a = "It was taken from a satellite, and they think the police allegedly stole the tapes."
    b = "No warning. It was all across the roadway at the time."
    # "it was across" for "It was all across": two stop words, a word left out (lenient evidence only)
    said = answer(True, ["allegedly stole"], ["it was across"])
    records = [{"match": "", "texts": [said]}]
    doc = replay_nlp(tmp_path, records)(make_pair_doc(spacy.blank("en"), a, b))  # lenient: the default
    assert [q["status"] for q in llm_details(doc)["samples"][0]["quotes"]] == ["aligned", "aligned"]
    assert [s.text for s in doc.spans["paraphrase"]] == ["allegedly stole", "It was all across"]
    nlp = replay_nlp(tmp_path, records, factory="paraphrase_llm", short_evidence="strict")
    nlp.to_disk(tmp_path / "pipe")
    loaded = spacy.load(tmp_path / "pipe")
    assert loaded.get_pipe("paraphrase_llm").task.short_evidence == "strict"
    doc = loaded(make_pair_doc(loaded, a, b))
    assert [q["status"] for q in llm_details(doc)["samples"][0]["quotes"]] == ["aligned", "not_found"]
    assert [s.text for s in doc.spans["paraphrase"]] == ["allegedly stole"]
    with pytest.raises(ValueError, match="short_evidence"):
        replay_nlp(tmp_path, records, short_evidence="loose")
    with pytest.raises(ValueError, match="short_evidence"):
        loaded.get_pipe("paraphrase_llm").task.set_cfg({"short_evidence": "loose"})


def test_prompt_structure_and_speakers(tmp_path):
    nlp = replay_nlp(tmp_path, [{"match": "", "texts": [NO]}])
    task = nlp.get_pipe("llm").task
    plain = task._render_text(make_pair_doc(nlp, GUEST, HOST))
    assert plain.count("Classification:") == 8 and plain.count("Let's think step by step.") == 9
    assert plain.endswith(f"Guest: {GUEST}\nHost: {HOST}\nQuestion: {task.question}\nExplanation: Let's think step by step.")
    named = task._render_text(make_pair_doc(nlp, GUEST, HOST, speakers=("DARYN", "ANNA")))
    assert f"Guest (DARYN): {GUEST}\nHost (ANNA): {HOST}" in named
    # ContextDeP's converted Docs label the turns GUEST / HOST: no name
    assert task._render_text(make_pair_doc(nlp, GUEST, HOST, speakers=("GUEST", "HOST"))) == plain
    swapped = task._render_text(make_pair_doc(nlp, HOST, GUEST))
    assert swapped != plain


def test_custom_examples_file_and_bad_examples(tmp_path):
    eg = {"guest": "A b.", "host": "B a.", "explanation": "Same.", "guest_quotes": ["A b"], "host_quotes": ["B a"],
          "answer": "Yes"}
    srsly.write_jsonl(tmp_path / "eg.jsonl", [eg])
    nlp = replay_nlp(tmp_path, [{"match": "", "texts": [NO]}],
                     examples={"@misc": "spacy.FewShotReader.v1", "path": str(tmp_path / "eg.jsonl")})
    text = nlp.get_pipe("llm").task._render_text(make_pair_doc(nlp, GUEST, HOST))
    assert text.count("Classification:") == 1 and "Guest: A b." in text
    srsly.write_jsonl(tmp_path / "bad.jsonl", [{**eg, "answer": "Perhaps"}])
    with pytest.raises(ValueError, match="answer must be Yes or No"):
        replay_nlp(tmp_path, [], examples={"@misc": "spacy.FewShotReader.v1", "path": str(tmp_path / "bad.jsonl")})
    srsly.write_jsonl(tmp_path / "bad.jsonl", [{k: v for k, v in eg.items() if k != "host_quotes"}])
    with pytest.raises(ValueError, match="lacks"):
        replay_nlp(tmp_path, [], examples={"@misc": "spacy.FewShotReader.v1", "path": str(tmp_path / "bad.jsonl")})


def test_bad_task_settings(tmp_path):
    with pytest.raises(ValueError, match="n_samples"):
        replay_nlp(tmp_path, [], n_samples=0)
    with pytest.raises(ValueError, match="highlight_scale"):
        replay_nlp(tmp_path, [], highlight_scale="loud")
    with pytest.raises(ValueError, match="speaker_labels"):
        replay_nlp(tmp_path, [], speaker_labels=["A", "A"])


def test_not_a_pair_doc(tmp_path):
    nlp = replay_nlp(tmp_path, [{"match": "", "texts": [NO]}])
    with pytest.raises(ValueError, match="make_pair_doc"):
        nlp("just a text")


def test_docbin_roundtrip_keeps_details(tmp_path):
    nlp = replay_nlp(tmp_path, [{"match": "", "texts": [YES, NO, NO]}])
    doc = nlp(make_pair_doc(nlp, GUEST, HOST))
    back = list(DocBin(docs=[doc], store_user_data=True).get_docs(nlp.vocab))[0]
    assert llm_details(back)["n_yes"] == 1
    assert back.spans["paraphrase"].attrs["llm"]["n_no"] == 2
    assert back.cats["PARAPHRASE"] == pytest.approx(1 / 3)


def examples_of(nlp, pairs):
    out = []
    for (a, b), gold in pairs:
        ref = make_pair_doc(nlp, a, b)
        ref.spans["paraphrase"] = []
        ref.cats["PARAPHRASE"] = float(gold)
        out.append(Example(make_pair_doc(nlp, a, b), ref))
    return out


def test_a_plain_readout_and_the_scorer_decide_by_votes(tmp_path):
    nlp = replay_nlp(tmp_path, [{"match": "", "texts": [YES, NO, NO]}], factory="paraphrase_llm")
    egs = examples_of(nlp, [((GUEST, HOST), 0)])
    docs = list(nlp.pipe([eg.predicted for eg in egs]))
    egs = [Example(d, eg.reference) for d, eg in zip(docs, egs)]
    pipe = nlp.get_pipe("paraphrase_llm")
    # tune's sweep re-annotates with a plain Readout: it keeps the stored vote share 1/3 as
    # the pair score even when the token shares say otherwise, and the LLM scorer decides by it
    low = Readout.from_cfg({**pipe.cfg, "threshold": 0.3})
    for eg in egs:
        low.reannotate(eg.predicted)
    eg0 = egs[0].predicted
    eg0.spans["paraphrase"].attrs["token_probs"] = numpy.where(
        numpy.isnan(eg0.spans["paraphrase"].attrs["token_probs"]), numpy.nan, 0.9).astype("float32")
    low.reannotate(eg0)
    assert eg0.cats["PARAPHRASE"] == pytest.approx(1 / 3)  # the stored vote share, not the plain rule's 0.9
    assert eg0.spans["paraphrase"].attrs["margin"] == pytest.approx(1 / 3 - 0.3)
    scores = score_paraphrase_llm(egs, name="x", **{**pipe.cfg, "threshold": 0.5})
    assert eg0.cats["PARAPHRASE"] == pytest.approx(1 / 3)
    assert scores["x_pair_acc"] == 1.0  # 1/3 < 0.5: "no", as the gold says


def test_paraphrase_llm_component_for_the_cli(tmp_path):
    from spacy_paraphrase.annotate.annotator import find_readout

    nlp = replay_nlp(tmp_path, [{"match": "Coming back", "texts": [YES, YES, NO]}, {"match": "", "texts": [NO]}],
                     factory="paraphrase_llm")
    pipe = nlp.get_pipe("paraphrase_llm")
    assert find_readout(nlp).threshold == 0.5 and "highlight_threshold" in pipe.cfg
    egs = examples_of(nlp, [((GUEST, HOST), 1), (("It rained.", "How was the match?"), 0)])
    scores = nlp.evaluate(egs)
    assert scores["paraphrase_llm_pair_acc"] == 1.0 and scores["paraphrase_llm_pair_f"] == 1.0
    # the cfg is the task's: tune's setting reaches the readout
    pipe.cfg["threshold"] = 0.9
    assert nlp(make_pair_doc(nlp, GUEST, HOST)).spans["paraphrase"].attrs["margin"] == pytest.approx(2 / 3 - 0.9)
    assert len(nlp(make_pair_doc(nlp, GUEST, HOST)).spans["paraphrase"]) == 0


def test_to_disk_and_back_with_a_saved_threshold(tmp_path):
    nlp = replay_nlp(tmp_path, [{"match": "", "texts": [YES, YES, NO]}], factory="paraphrase_llm", n_samples=5)
    nlp.get_pipe("paraphrase_llm").cfg["threshold"] = 0.7
    nlp.get_pipe_config("paraphrase_llm")["threshold"] = 0.7  # what tune --save writes
    nlp.to_disk(tmp_path / "pipe")
    loaded = spacy.load(tmp_path / "pipe")
    pipe = loaded.get_pipe("paraphrase_llm")
    assert pipe.cfg["threshold"] == pytest.approx(0.7) and pipe.task.n_samples == 5
    doc = loaded(make_pair_doc(loaded, GUEST, HOST))
    assert doc.cats["PARAPHRASE"] == pytest.approx(2 / 3) and len(doc.spans["paraphrase"]) == 0


def test_cfg_changed_in_memory_is_saved_with_the_pipeline(tmp_path):
    nlp = replay_nlp(tmp_path, [{"match": "", "texts": [YES, YES, NO]}], factory="paraphrase_llm")
    nlp.get_pipe("paraphrase_llm").cfg["highlight_threshold"] = 0.25
    nlp.to_disk(tmp_path / "pipe")
    loaded = spacy.load(tmp_path / "pipe")
    assert loaded.get_pipe("paraphrase_llm").cfg["highlight_threshold"] == pytest.approx(0.25)


def test_tune_save_in_place_is_what_loads(tmp_path):
    from spacy_paraphrase.tuning.settings import save_settings_in_place

    nlp = replay_nlp(tmp_path, [{"match": "", "texts": [YES, YES, NO]}], factory="paraphrase_llm")
    nlp.to_disk(tmp_path / "pipe")
    loaded = spacy.load(tmp_path / "pipe")
    # what `tune --save` does: cfg and config in memory, then only those two files rewritten
    loaded.get_pipe("paraphrase_llm").cfg["threshold"] = 0.8
    loaded.get_pipe_config("paraphrase_llm")["threshold"] = 0.8
    save_settings_in_place(loaded, tmp_path / "pipe", "paraphrase_llm")
    again = spacy.load(tmp_path / "pipe")
    assert again.get_pipe("paraphrase_llm").cfg["threshold"] == pytest.approx(0.8)
    assert len(again(make_pair_doc(again, GUEST, HOST)).spans["paraphrase"]) == 0  # 2/3 < 0.8


def test_scores_count_pairs_without_answer(tmp_path):
    nlp = replay_nlp(tmp_path, [{"match": "Coming back", "texts": [YES, "??", answer(True, ["snow"], ["snow"])]},
                                {"match": "", "error": "HTTP 500"}], factory="paraphrase_llm")
    egs = examples_of(nlp, [((GUEST, HOST), 1), (("It rained.", "How was the match?"), 0)])
    with pytest.warns(LLMPairWarning):
        scores = nlp.evaluate(egs)
    assert scores["paraphrase_llm_llm_no_answer"] == 1
    assert scores["paraphrase_llm_llm_unparsed"] == pytest.approx(1 / 3)
    assert scores["paraphrase_llm_llm_quotes_lost"] == pytest.approx(2 / 4)  # "snow" is in neither turn
    assert scores["paraphrase_llm_pair_acc"] == 1.0  # the failed pair scored as "no"
    with pytest.warns(LLMPairWarning):
        docs = list(nlp.pipe([eg.predicted for eg in egs]))
    score_paraphrase_llm([Example(d, eg.reference) for d, eg in zip(docs, egs)], name="x",
                         **nlp.get_pipe("paraphrase_llm").cfg)
    assert math.isnan(docs[1].cats["PARAPHRASE"])  # ... but its Doc keeps NaN


def test_pairs_without_answer_do_not_poison_soft_scores(tmp_path):
    import warnings

    nlp = replay_nlp(tmp_path, [{"match": "Coming back", "texts": [YES, NO, NO]}, {"match": "", "error": "HTTP 500"}],
                     factory="paraphrase_llm")
    egs = examples_of(nlp, [((GUEST, HOST), 1), (("It rained.", "How was the match?"), 0)])
    for eg, votes in zip(egs, ((2, 3), (0, 3))):
        eg.reference.spans["paraphrase"].attrs["votes"] = list(votes)
        eg.reference.spans["paraphrase"].attrs["highlight_counts"] = [0] * len(eg.reference)
    with pytest.warns(LLMPairWarning):
        docs = list(nlp.pipe([eg.predicted for eg in egs]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        scores = score_paraphrase_llm([Example(d, eg.reference) for d, eg in zip(docs, egs)], name="x",
                                      **nlp.get_pipe("paraphrase_llm").cfg)
    assert scores["x_llm_no_answer"] == 1 and scores["x_pair_ece"] == scores["x_pair_ece"]  # not NaN
    assert math.isnan(docs[1].spans["paraphrase"].attrs["vote_share"])


def test_unparsed_samples_are_asked_again(tmp_path):
    # the second sample is unparsed twice, then parses; the third never does (2 re-asks at most)
    records = [{"match": "", "texts": [YES, "I am not sure what", "Hmm"],
                "reasks": ["still unsure", NO, "what?", "no idea"]}]
    nlp = replay_nlp(tmp_path, records, factory="paraphrase_llm")
    (eg,) = examples_of(nlp, [((GUEST, HOST), 1)])
    doc = nlp(eg.predicted)
    details = doc.spans["paraphrase"].attrs["llm"]
    assert (details["n_yes"], details["n_no"], details["n_unparsed"]) == (1, 1, 1)
    assert (details["n_reasked"], details["reasks"]) == (2, 4)
    assert [s["asks"] for s in details["samples"]] == [1, 3, 3]
    assert doc.cats["PARAPHRASE"] == pytest.approx(0.5)
    scores = nlp.get_pipe("paraphrase_llm").score([Example(doc, eg.reference)])
    assert scores["paraphrase_llm_llm_unparsed"] == pytest.approx(1 / 3)
    assert scores["paraphrase_llm_llm_reasked"] == pytest.approx(2 / 3)
    assert scores["paraphrase_llm_llm_reasks"] == pytest.approx(4 / 3)
    # the setting: 0 = no re-ask (the first answers are kept)
    nlp0 = replay_nlp(tmp_path, records, factory="paraphrase_llm", reask_unparsed=0)
    details0 = llm_details(nlp0(make_pair_doc(nlp0, GUEST, HOST)))
    assert (details0["n_unparsed"], details0["n_reasked"], details0["reasks"]) == (2, 0, 0)
    with pytest.raises(ValueError, match="reask_unparsed"):
        replay_nlp(tmp_path, records, reask_unparsed=-1)
