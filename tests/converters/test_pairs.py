"""Converters for pair-classification data: circa, multipit, arpa, pairs."""
import csv
import json

import pytest
import spacy
from spacy.tokens import DocBin
from typer.testing import CliRunner

from spacy_paraphrase.cli import app
from spacy_paraphrase.converters import (
    ConversionError,
    convert_arpa,
    convert_circa,
    convert_multipit,
    convert_pairs,
)
from spacy_paraphrase.converters.circa import RELAXED_LABELS, RELAXED_MAP, STRICT_LABELS, assign_splits

runner = CliRunner()

CIRCA_HEADER = "id\tcontext\tquestion-X\tcanquestion-X\tanswer-Y\tjudgements\tgoldstandard1\tgoldstandard2\n"
SCENARIOS = ["Y has just moved.", "X wants to know about food.", "X and Y are colleagues."]
NOT_SURE = "I am not sure how X will interpret Y\u2019s answer"
PY, PN, YC = "Probably yes / sometimes yes", "Probably no", "Yes, subject to some conditions"


def circa_row(rid, context, question, answer, judgements, gs1, gs2):
    return f"{rid}\t{context}\t{question}\tI {question} .\t{answer}\t{'#'.join(judgements)}\t{gs1}\t{gs2}\n"


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def circa_tsv(tmp_path):
    rows = [
        circa_row(0, SCENARIOS[0], "Are you employed?", "I'm a vet.", ["Yes"] * 5, "Yes", "Yes"),
        circa_row(1, SCENARIOS[1], "Do you like Korean food?", "I wouldn't say so",
                  [PN, "No", "No", "No", PY], "No", "No"),
        # no strict majority, relaxed majority Yes (2 Yes + 1 Probably yes)
        circa_row(2, SCENARIOS[2], "Got plans?", "Maybe the beach.",
                  ["Yes", PY, NOT_SURE, "Yes", "Other"], "", "Yes"),
        # no majority at all; NA and empty judgements
        circa_row(3, SCENARIOS[0], "Do you drive?", "Sometimes.", ["Yes", "NA", "No", ""], "", ""),
        # corrupted in the source like the release's 20 rows
        circa_row(4, SCENARIOS[1], "Do y", '"ones?"",""answer"":""I do."', ["Yes"] * 5, "Yes", "Yes"),
        circa_row(5, SCENARIOS[2], "Is it far?", "A short walk.", [NOT_SURE] * 3 + ["No", "No"],
                  NOT_SURE, "In the middle, neither yes nor no"),
    ]
    return write(tmp_path, "circa.tsv", CIRCA_HEADER + "".join(rows))


# -- Circa --------------------------------------------------------------------


def test_circa_hard_relaxed(circa_tsv, nlp):
    docs, report = convert_circa(circa_tsv, nlp.vocab)
    assert report.n_rows == 6 and report.n_docs == len(docs) == 4
    assert [d.spans["turns"].attrs["id"] for d in docs] == ["0", "1", "2", "5"]
    d = docs[1]
    first, second = d.spans["turns"]
    assert (first.text, first.label_, second.text, second.label_) == (
        "Do you like Korean food?", "QUESTION", "I wouldn't say so", "ANSWER")
    assert d.cats == {label: float(label == "No") for label in RELAXED_LABELS}
    attrs = d.spans["turns"].attrs
    assert attrs["context"] == SCENARIOS[1]
    assert attrs["judgements"] == [PN, "No", "No", "No", PY]
    assert attrs["gold"] == "No"
    assert docs[2].cats["Yes"] == 1.0  # relaxed gold exists where strict has none
    assert docs[3].cats["In the middle, neither yes nor no"] == 1.0
    notes = " ".join(report.notes)
    assert "1 rows without a majority" in notes and "1 rows corrupted in the source" in notes


def test_circa_hard_strict(circa_tsv, nlp):
    docs, report = convert_circa(circa_tsv, nlp.vocab, labels="strict")
    assert [d.spans["turns"].attrs["id"] for d in docs] == ["0", "1", "5"]
    assert set(docs[0].cats) == set(STRICT_LABELS) and len(STRICT_LABELS) == 8
    assert docs[2].cats[NOT_SURE] == 1.0 and sum(docs[2].cats.values()) == 1.0
    assert any("2 rows without a majority (empty goldstandard1)" in n for n in report.notes)


def test_circa_soft(circa_tsv, nlp):
    strict, report = convert_circa(circa_tsv, nlp.vocab, labels="strict", mode="soft")
    relaxed, _ = convert_circa(circa_tsv, nlp.vocab, labels="relaxed", mode="soft")
    assert [d.spans["turns"].attrs["id"] for d in strict] == ["0", "1", "2", "3", "5"]
    for docs, labels in ((strict, STRICT_LABELS), (relaxed, RELAXED_LABELS)):
        for d in docs:
            assert list(d.cats) == list(labels)
            assert sum(d.cats.values()) == pytest.approx(1.0)
    s1 = strict[1].cats
    assert (s1["No"], s1[PN], s1[PY], s1["Yes"]) == pytest.approx((0.6, 0.2, 0.2, 0.0))
    r1 = relaxed[1].cats
    assert (r1["No"], r1["Yes"]) == pytest.approx((0.8, 0.2))
    r2 = relaxed[2].cats
    assert (r2["Yes"], r2["In the middle, neither yes nor no"], r2["Other"]) == pytest.approx((0.6, 0.2, 0.2))
    # NA and empty judgements are dropped from the distribution (and counted)
    assert strict[3].cats["Yes"] == pytest.approx(0.5) and strict[3].cats["No"] == pytest.approx(0.5)
    assert strict[3].spans["turns"].attrs["judgements"] == ["Yes", "NA", "No", ""]
    assert strict[3].spans["turns"].attrs["gold"] is None
    assert any("2 judgements dropped" in n for n in report.notes)


def test_circa_soft_row_without_usable_judgement_is_bad(tmp_path, nlp):
    body = circa_row(0, "S", "Q?", "A.", ["Yes"] * 5, "Yes", "Yes") + circa_row(1, "S", "Q?", "A.", ["NA"] * 5, "", "")
    path = write(tmp_path, "c.tsv", CIRCA_HEADER + body)
    with pytest.raises(ConversionError) as info:
        convert_circa(path, nlp.vocab, mode="soft")
    assert info.value.line == 3 and "no usable judgement" in info.value.reason
    docs, report = convert_circa(path, nlp.vocab, mode="soft", skip_bad=True)
    assert len(docs) == 1 and len(report.skipped) == 1
    # hard mode: just a row without majority, counted in notes
    docs, report = convert_circa(path, nlp.vocab, mode="hard")
    assert len(docs) == 1 and not report.skipped


@pytest.fixture
def circa_50(tmp_path):
    rows = []
    for i in range(50):
        rows.append(circa_row(100 + i, SCENARIOS[i % 3], f"Question {i}?", f"Answer {i}.", ["Yes"] * 5, "Yes", "Yes"))
    return write(tmp_path, "circa50.tsv", CIRCA_HEADER + "".join(rows))


def _ids(docs):
    return [d.spans["turns"].attrs["id"] for d in docs]


def test_circa_matched_splits_partition_and_are_deterministic(circa_50, nlp):
    parts = {s: _ids(convert_circa(circa_50, nlp.vocab, split=s, seed=1)[0]) for s in ("train", "dev", "test")}
    assert [len(parts[s]) for s in ("train", "dev", "test")] == [30, 10, 10]
    union = parts["train"] + parts["dev"] + parts["test"]
    assert sorted(union, key=int) == [str(100 + i) for i in range(50)]  # disjoint and complete
    again = _ids(convert_circa(circa_50, nlp.vocab, split="train", seed=1)[0])
    assert again == parts["train"]
    other = _ids(convert_circa(circa_50, nlp.vocab, split="train", seed=2)[0])
    assert set(other) != set(parts["train"])
    # the split of a row depends on neither the mode nor the label set
    soft = _ids(convert_circa(circa_50, nlp.vocab, split="train", seed=1, mode="soft", labels="strict")[0])
    assert soft == parts["train"]


@pytest.mark.parametrize("held_out", [2, "2", SCENARIOS[0]])
def test_circa_unmatched_holds_out_one_scenario(circa_50, nlp, held_out):
    # sorted scenarios: colleagues (0), food (1), moved (2)
    assert sorted(SCENARIOS)[2] == SCENARIOS[0]
    parts = {}
    for s in ("train", "dev", "test"):
        docs, report = convert_circa(circa_50, nlp.vocab, split=s, setting="unmatched", held_out=held_out)
        parts[s] = _ids(docs)
        if s == "test":
            assert {d.spans["turns"].attrs["context"] for d in docs} == {SCENARIOS[0]}
    expected_test = [str(100 + i) for i in range(50) if i % 3 == 0]
    assert parts["test"] == expected_test
    rest = [str(100 + i) for i in range(50) if i % 3 != 0]
    assert sorted(parts["train"] + parts["dev"], key=int) == rest
    assert len(parts["train"]) == 8 * len(rest) // 10


def test_circa_unmatched_needs_a_valid_held_out(circa_50, nlp):
    with pytest.raises(ValueError, match="needs held_out"):
        convert_circa(circa_50, nlp.vocab, split="test", setting="unmatched")
    with pytest.raises(ValueError, match="out of range"):
        convert_circa(circa_50, nlp.vocab, split="test", setting="unmatched", held_out=3)
    with pytest.raises(ValueError, match="not a scenario"):
        convert_circa(circa_50, nlp.vocab, split="test", setting="unmatched", held_out="Nowhere.")


@pytest.mark.parametrize("options", [
    dict(split="all", setting="unmatched", held_out=0),  # would keep every row, not the held-out scenario
    dict(split="all", seed=3),
    dict(split="test", setting="matched", held_out=0),  # held_out would be ignored
])
def test_circa_options_that_would_be_ignored_are_refused(circa_50, nlp, options):
    with pytest.raises(ValueError, match="split|unmatched"):
        convert_circa(circa_50, nlp.vocab, **options)


def test_assign_splits_sizes():
    splits, _ = assign_splits(["a"] * 34268, "matched", 0)
    assert [splits.count(s) for s in ("train", "dev", "test")] == [20560, 6853, 6855]


@pytest.mark.parametrize(
    "body,line,reason",
    [
        (circa_row(0, "S", "Q?", "A.", ["Yes"], "Yes", "Yes") + "1\tS\tQ?\tI Q", 3, "expected 8 fields, found 4"),
        (circa_row(0, "S", "Q?", "  ", ["Yes"], "Yes", "Yes"), 2, "whitespace-only text in column 'answer-Y'"),
        (circa_row(0, "S", "Q?", "A.", ["Yes"], "Yes", "Maybe"), 2, "goldstandard2 'Maybe' is not a relaxed label"),
        (circa_row(0, "", "Q?", "A.", ["Yes"], "Yes", "Yes"), 2, "empty context"),
    ],
)
def test_circa_bad_rows(tmp_path, nlp, body, line, reason):
    path = write(tmp_path, "bad.tsv", CIRCA_HEADER + body)
    with pytest.raises(ConversionError) as info:
        convert_circa(path, nlp.vocab)
    assert info.value.line == line and reason in info.value.reason
    assert str(path) in str(info.value)


def test_circa_wrong_delimiter(tmp_path, nlp):
    path = write(tmp_path, "c.csv", CIRCA_HEADER.replace("\t", ","))
    with pytest.raises(ConversionError, match="missing column"):
        convert_circa(path, nlp.vocab)


def test_circa_skip_bad_counts_every_split_alike(circa_50, tmp_path, nlp):
    text = circa_50.read_text(encoding="utf-8") + "999\tS\ttruncated"
    path = write(tmp_path, "trunc.tsv", text)
    for split in ("all", "train", "test"):
        docs, report = convert_circa(path, nlp.vocab, split=split, skip_bad=True)
        assert len(report.skipped) == 1 and report.skipped[0].line == 52
        assert report.n_rows == 51


# -- MultiPIT and ARPA ----------------------------------------------------------


def test_multipit(tmp_path, nlp):
    text = (
        "sentence1,sentence2,label\n"
        '"Today is the #wintersolstice , marking winter .",It\'s the winter solstice .,1\n'
        '"He said ""hi"" , then left",Winter blessings .,0\n'
    )
    docs, report = convert_multipit(write(tmp_path, "train.csv", text), nlp.vocab)
    assert report.n_rows == 2 and len(docs) == 2
    first, second = docs[0].spans["turns"]
    assert first.text == "Today is the #wintersolstice , marking winter ." and first.label_ == "FIRST"
    assert second.label_ == "SECOND"
    assert docs[0].cats == {"IS_PARAPHRASE": 1.0, "NOT_PARAPHRASE": 0.0}
    assert docs[1].cats == {"IS_PARAPHRASE": 0.0, "NOT_PARAPHRASE": 1.0}
    assert docs[1].spans["turns"][0].text == 'He said "hi" , then left'
    assert _ids(docs) == ["train:2", "train:3"]  # the pair-file default: {file stem}:{line}
    assert "PARAPHRASE" not in docs[0].cats


@pytest.mark.parametrize(
    "body,line,reason",
    [
        ("a,b,2\n", 2, "label must be 0 or 1"),
        ("a,b,1\n , b,0\n", 3, "whitespace-only text in column 'sentence1'"),
        ("a,b,1\nc,d", 3, "expected 3 fields, found 2"),
    ],
)
def test_multipit_bad_rows(tmp_path, nlp, body, line, reason):
    path = write(tmp_path, "m.csv", "sentence1,sentence2,label\n" + body)
    with pytest.raises(ConversionError) as info:
        convert_multipit(path, nlp.vocab)
    assert info.value.line == line and reason in info.value.reason


def test_multipit_wrong_delimiter_and_encoding(tmp_path, nlp):
    with pytest.raises(ConversionError, match="missing column"):
        convert_multipit(write(tmp_path, "m.csv", "sentence1\tsentence2\tlabel\na\tb\t1\n"), nlp.vocab)
    bad = tmp_path / "latin.csv"
    bad.write_bytes("sentence1,sentence2,label\nca\xf1a,b,1\n".encode("latin-1"))
    with pytest.raises(ConversionError, match="not valid UTF-8") as info:
        convert_multipit(bad, nlp.vocab)
    assert info.value.line == 2


ARPA = "Sentence1\tSentence2\tParaphrase\nԱ բ:\tԳ դ:\t1\nԵ զ:\tԷ ը:\t0\nԹ ժ:\tԻ լ:\t-1\n"


def test_arpa_labels(tmp_path, nlp):
    path = write(tmp_path, "train.tsv", ARPA)
    docs, report = convert_arpa(path, nlp.vocab)
    assert [max(d.cats, key=d.cats.get) for d in docs] == ["IS_PARAPHRASE", "NOT_PARAPHRASE", "NOT_PARAPHRASE"]
    assert all(set(d.cats) == {"IS_PARAPHRASE", "NOT_PARAPHRASE"} for d in docs)
    docs, _ = convert_arpa(path, nlp.vocab, keep_near=True)
    assert [max(d.cats, key=d.cats.get) for d in docs] == ["IS_PARAPHRASE", "NEAR_PARAPHRASE", "NOT_PARAPHRASE"]
    assert all(len(d.cats) == 3 and sum(d.cats.values()) == 1.0 for d in docs)
    assert docs[1].spans["turns"].attrs["raw"] == "0"
    hy = spacy.blank("hy")
    docs, _ = convert_arpa(path, hy.vocab, lang="hy")
    assert docs[0].spans["turns"][0].text == "Ա բ:"
    with pytest.raises(ValueError, match="lang"):
        convert_arpa(path, hy.vocab)


def test_arpa_bad_and_skip(tmp_path, nlp):
    path = write(tmp_path, "a.tsv", ARPA + "x\ty\t2\nx\ty\n")
    with pytest.raises(ConversionError) as info:
        convert_arpa(path, nlp.vocab)
    assert info.value.line == 5 and "must be 1, 0 or -1" in info.value.reason
    docs, report = convert_arpa(path, nlp.vocab, skip_bad=True)
    assert len(docs) == 3 and [e.line for e in report.skipped] == [5, 6]
    assert "expected 3 fields, found 2" in report.skipped[1].reason


# -- pairs ----------------------------------------------------------------------

MRPC = (
    "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
    '1\t702876\t702977\tAmrozi accused his brother , whom he called " the witness " .\tReferring to him as only " the witness " , Amrozi accused his brother .\n'
    "0\t2108705\t2108831\tYucaipa owned Dominick 's before selling the chain .\tYucaipa bought Dominick 's in 1995 for $ 693 million .\n"
    '1\t1330381\t1330521\t" No comment , he said .\tHe did not comment .\n'
)


def test_pairs_mrpc_like_file(tmp_path, nlp):
    path = write(tmp_path, "msr_paraphrase_train.txt", MRPC)
    docs, report = convert_pairs(path, nlp.vocab, text1="#1 String", text2="#2 String",
                                 label="Quality", id_column="#1 ID", quoting="none")
    assert report.n_rows == 3 and len(docs) == 3
    assert _ids(docs) == ["702876", "2108705", "1330381"]
    assert docs[0].spans["turns"][0].text == 'Amrozi accused his brother , whom he called " the witness " .'
    assert docs[2].spans["turns"][0].text == '" No comment , he said .'
    assert [d.cats for d in docs] == [
        {"IS_PARAPHRASE": 1.0, "NOT_PARAPHRASE": 0.0},
        {"IS_PARAPHRASE": 0.0, "NOT_PARAPHRASE": 1.0},
        {"IS_PARAPHRASE": 1.0, "NOT_PARAPHRASE": 0.0},
    ]
    # with CSV quoting, the unbalanced quote opening a field runs to the end of the file: a bad row
    with pytest.raises(ConversionError) as info:
        convert_pairs(path, nlp.vocab, text1="#1 String", text2="#2 String", label="Quality")
    assert info.value.line == 4 and "unreadable record" in info.value.reason


def test_pairs_headerless_indices_and_label_map(tmp_path, nlp):
    path = write(tmp_path, "p.csv", "x,first a,second a,yes\ny,first b,second b,no\n")
    docs, report = convert_pairs(path, nlp.vocab, header=False, text1=1, text2="2", label=3,
                                 id_column=0, label_map={"yes": "IS_PARAPHRASE", "no": "NOT_PARAPHRASE"})
    assert _ids(docs) == ["x", "y"]
    assert docs[0].text == "first a second a"
    assert docs[1].cats == {"IS_PARAPHRASE": 0.0, "NOT_PARAPHRASE": 1.0}
    with pytest.raises(ValueError, match="0-based indices"):
        convert_pairs(path, nlp.vocab, header=False)
    with pytest.raises(ConversionError, match="not in label_map") as info:
        convert_pairs(path, nlp.vocab, header=False, text1=1, text2=2, label=3, label_map={"yes": "Y"})
    assert info.value.line == 2
    # wrong delimiter without a header: the column index is out of range
    with pytest.raises(ConversionError, match="out of range"):
        convert_pairs(path, nlp.vocab, header=False, text1=1, text2=2, label=3, delimiter="tab")


def test_pairs_raw_label_names_multiclass(tmp_path, nlp):
    path = write(tmp_path, "p.tsv", "s1\ts2\tlab\na\tb\tentail\nc\td\tneutral\n")
    docs, report = convert_pairs(path, nlp.vocab, text1="s1", text2="s2", label="lab")
    assert docs[0].cats == {"entail": 1.0, "neutral": 0.0}
    assert any("Label set (2)" in n for n in report.notes)


def test_pairs_wrong_delimiter_and_truncated(tmp_path, nlp):
    path = write(tmp_path, "p.tsv", "sentence1,sentence2,label\na,b,1\n")
    with pytest.raises(ConversionError, match="no pair text columns") as info:
        convert_pairs(path, nlp.vocab)
    assert info.value.line == 1 and "'\\t'" in info.value.reason
    with pytest.raises(ConversionError, match="missing column") as info:
        convert_pairs(path, nlp.vocab, text1="sentence1", text2="sentence2")
    assert info.value.line == 1 and "'\\t'" in info.value.reason
    path = write(tmp_path, "q.csv", "sentence1,sentence2,label\na,b,1\nc,d")
    with pytest.raises(ConversionError) as info:
        convert_pairs(path, nlp.vocab)
    assert info.value.line == 3 and "expected 3 fields" in info.value.reason and "truncated" in info.value.reason
    docs, report = convert_pairs(path, nlp.vocab, skip_bad=True)
    assert len(docs) == 1 and len(report.skipped) == 1
    with pytest.raises(ValueError, match="extension"):
        convert_pairs(write(tmp_path, "p.dat", "x"), nlp.vocab)


def test_pairs_jsonl_labelled_unlabelled_and_bad(tmp_path, nlp):
    lines = [
        {"q": "How old are you?", "a": "What is your age?", "y": 1, "id": "p1"},
        {"q": "Is it raining?", "a": "Where is the bus?", "y": 0, "id": "p2"},
        {"q": "   ", "a": "x", "y": 0, "id": "p3"},
    ]
    text = "\n".join(json.dumps(x) for x in lines) + '\n\n{"q": "trunc'
    path = write(tmp_path, "p.jsonl", text)
    with pytest.raises(ConversionError) as info:
        convert_pairs(path, nlp.vocab, text1="q", text2="a", label="y", id_column="id")
    assert info.value.line == 3 and "whitespace-only text in column 'q'" in info.value.reason
    docs, report = convert_pairs(path, nlp.vocab, text1="q", text2="a", label="y", id_column="id", skip_bad=True)
    assert _ids(docs) == ["p1", "p2"] and [e.line for e in report.skipped] == [3, 5]
    assert "not valid JSON" in report.skipped[1].reason
    assert docs[0].cats == {"IS_PARAPHRASE": 1.0, "NOT_PARAPHRASE": 0.0}
    unl, report = convert_pairs(path, nlp.vocab, text1="q", text2="a", label=None, skip_bad=True)
    assert len(unl) == 2 and all(d.cats == {} for d in unl)
    assert _ids(unl) == ["p1", "p2"]  # the id key, used by default
    missing, report = convert_pairs(path, nlp.vocab, text1="q", text2="b", label=None, skip_bad=True)
    assert not missing and "missing key(s) ['b']" in report.skipped[0].reason


def test_pairs_unlabelled_csv(tmp_path, nlp):
    path = write(tmp_path, "u.csv", "sentence1,sentence2\nhello there,hi\n")
    docs, report = convert_pairs(path, nlp.vocab, label=None)
    assert len(docs) == 1 and docs[0].cats == {}
    with pytest.raises(ConversionError, match="missing column"):
        convert_pairs(path, nlp.vocab)


# -- CLI --------------------------------------------------------------------------


def test_cli_circa_options_and_docbin_roundtrip(tmp_path, circa_tsv):
    out = tmp_path / "c.spacy"
    result = runner.invoke(app, ["convert", "circa", str(circa_tsv), str(out), "--mode", "soft",
                                 "--labels", "strict", "--split", "all"])
    assert result.exit_code == 0, result.output
    assert "judgements dropped" in result.output
    docs = list(DocBin().from_disk(out).get_docs(spacy.blank("en").vocab))
    assert len(docs) == 5
    attrs = docs[3].spans["turns"].attrs
    assert attrs["judgements"] == ["Yes", "NA", "No", ""] and attrs["gold"] is None
    assert docs[3].cats["Yes"] == pytest.approx(0.5)
    result = runner.invoke(app, ["convert", "circa", str(circa_tsv), str(out), "--split", "test",
                                 "--setting", "unmatched", "--held-out", "0", "--seed", "3"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["convert", "circa", str(circa_tsv), str(out), "--keep-near"])
    assert result.exit_code == 2 and "No such option: --keep-near" in result.output  # an arpa option
    result = runner.invoke(app, ["convert", "circa", str(circa_tsv), str(out), "--mode", "majority"])
    assert result.exit_code == 1 and "Unknown mode" in result.output


def test_cli_pairs_and_arpa(tmp_path):
    mrpc = write(tmp_path, "msr.txt", MRPC)
    out = tmp_path / "m.spacy"
    result = runner.invoke(app, ["convert", "pairs", str(mrpc), str(out), "--text1", "#1 String",
                                 "--text2", "#2 String", "--label", "Quality", "--quoting", "none"])
    assert result.exit_code == 0, result.output
    assert len(list(DocBin().from_disk(out).get_docs(spacy.blank("en").vocab))) == 3
    csv_path = write(tmp_path, "n.csv", "a,b,yes\nc,d,no\n")
    result = runner.invoke(app, ["convert", "pairs", str(csv_path), str(out), "--no-header", "--text1", "0",
                                 "--text2", "1", "--label", "2", "--label-map", '{"yes": "IS_PARAPHRASE", "no": "NOT_PARAPHRASE"}'])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["convert", "pairs", str(csv_path), str(out), "--no-header", "--text1", "0",
                                 "--text2", "1", "--no-label"])
    assert result.exit_code == 0, result.output
    arpa = write(tmp_path, "arpa.tsv", ARPA)
    result = runner.invoke(app, ["convert", "arpa", str(arpa), str(out), "--keep-near", "--lang", "hy"])
    assert result.exit_code == 0, result.output
    docs = list(DocBin().from_disk(out).get_docs(spacy.blank("hy").vocab))
    assert docs[1].cats["NEAR_PARAPHRASE"] == 1.0
    result = runner.invoke(app, ["convert", "multipit", str(csv_path), str(out), "--mode", "soft"])
    assert result.exit_code == 2 and "No such option: --mode" in result.output


# -- real data --------------------------------------------------------------------


def _real(*parts):
    from tests.util import DATA_DIR

    path = DATA_DIR.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} not available")
    return path


def test_real_circa(nlp):
    path = _real("circa", "circa-data.tsv")
    with path.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    assert len(rows) == 34268
    gs1 = {r["goldstandard1"] for r in rows} - {""}
    gs2 = {r["goldstandard2"] for r in rows} - {""}
    assert gs1 == set(STRICT_LABELS) and gs2 == set(RELAXED_LABELS)
    for r in rows:  # the strict -> relaxed mapping agrees with the data
        if r["goldstandard1"] and r["goldstandard2"]:
            assert RELAXED_MAP[r["goldstandard1"]] == r["goldstandard2"], r["id"]
    assert {j for r in rows for j in r["judgements"].split("#")} <= set(STRICT_LABELS)
    no_strict = sum(1 for r in rows if not r["goldstandard1"])
    no_relaxed = sum(1 for r in rows if not r["goldstandard2"])
    print(f"Circa rows without majority: strict {no_strict}, relaxed {no_relaxed}")
    assert (no_strict, no_relaxed) == (2743, 771)
    docs, report = convert_circa(path, nlp.vocab, labels="relaxed", mode="hard")
    assert report.n_rows == 34268 and not report.skipped
    # 20 corrupted rows (all with a relaxed majority) and 771 without majority left out
    assert len(docs) == 34268 - 20 - 771
    assert any("20 rows corrupted" in n for n in report.notes)
    assert len({d.spans["turns"].attrs["context"] for d in docs}) == 10
    assert all(list(d.cats) == list(RELAXED_LABELS) for d in docs)


def test_real_multipit(nlp):
    for name, n in (("train.csv", 4458), ("val.csv", 555)):
        docs, report = convert_multipit(_real("multipit_expert", name), nlp.vocab)
        assert report.n_rows == n and len(docs) == n and not report.skipped


def test_real_arpa(nlp):
    docs, report = convert_arpa(_real("arpa", "train.tsv"), nlp.vocab)
    assert report.n_rows == 4233 and len(docs) == 4233 and not report.skipped
    assert sum(d.cats["IS_PARAPHRASE"] for d in docs) == 1339


def test_pairs_keep_long_fields_and_unicode_line_separators(tmp_path, nlp):
    """A 200,000-character turn is not an unreadable row (csv's default field
    limit is 131,072), and a JSON string holding U+2028 / U+0085 / U+001C is
    one record (str.splitlines would cut it)."""
    long_turn = "word " * 40_000
    path = write(tmp_path, "long.csv", f"sentence1,sentence2,label\n{long_turn},short,1\n")
    (doc,), _ = convert_pairs(path, nlp.vocab)
    assert len(doc.spans["turns"][0]) == 40_000
    odd = "one\u2028two\x85three\x1cfour"
    rows = [{"sentence1": odd, "sentence2": "b", "label": 1}, {"sentence1": "c", "sentence2": "d", "label": 0}]
    path = write(tmp_path, "odd.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    docs, report = convert_pairs(path, nlp.vocab)
    assert len(docs) == 2 and not report.skipped
    assert docs[0].spans["turns"][0].text.split() == odd.split()
    for end in ("\r\n", "\r"):  # Windows and old Mac line ends are line ends
        path = write(tmp_path, "ends.jsonl", "".join(json.dumps(r) + end for r in rows))
        assert len(convert_pairs(path, nlp.vocab)[0]) == 2


@pytest.mark.parametrize("name,text", [
    ("plain.csv", "sentence1,sentence2,label\nHow old are you?,What is your age?,1\n\"Is it, raining?\",Where is the bus?,0\n"),
    ("ided.tsv", "id\tText1\tText2\tlabel\nq7\tHow old are you?\tWhat is your age?\t1\nq9\tIs it raining?\tWhere?\t0\n"),
    ("mrpc.txt", "Quality\t#1 String\t#2 String\n1\tHow old are you?\tWhat is your age?\n0\tIs it raining?\tWhere?\n"),
    ("objects.jsonl", '{"text1": "How old are you?", "text2": "What is your age?", "label": 1}\n'
                      '{"id": 3, "text1": "Is it raining?", "text2": "Where?", "label": 0}\n'),
    ("spaced.csv", "sentence1, sentence2, id,label\nHow old are you?,What is your age?, a,1\nIs it?,Where?,b,0\n"),
    ("mixed.jsonl", '{"sentence1": "How old are you?", "sentence2": "What is your age?", "label": 1}\n'
                    '{"text1": "Is it raining?", "text2": "Where?", "label": 0}\n'
                    '{"sentence1": "Is it?", "sentence2": "Where?", "label": 0, "id": " "}\n'
                    '{"sentence1": "Is it?", "sentence2": "Where?", "label": 0, "id": 1.5}\n'
                    '{"sentence1": "Is it?", "sentence2": "Where?", "label": 0, "id": "  x "}\n'),
])
def test_a_pair_file_has_the_same_columns_and_ids_as_a_training_file_and_as_a_dialog_file(tmp_path, nlp, name, text):
    """convert pairs and the pairs dialog format read one pair file alike
    without options: the same text columns and the same pair ids."""
    from spacy_paraphrase.dialogs.tables import read_pair_file

    path = write(tmp_path, name, text)
    label = "Quality" if name == "mrpc.txt" else "label"
    docs, report = convert_pairs(path, nlp.vocab, label=label, skip_bad=True)
    problems = []
    pairs = list(read_pair_file(path, on_problem=problems.append))
    assert _ids(docs) == [pair.pair_id for pair in pairs] and len(docs) == 2
    assert [bad.line for bad in report.skipped] == [problem.line for problem in problems]
    assert [tuple(t.text for t in doc.spans["turns"]) for doc in docs] == \
        [(pair.first.text, pair.second.text) for pair in pairs]
