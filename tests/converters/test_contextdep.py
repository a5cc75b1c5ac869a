import numpy
import pytest

from spacy_paraphrase.converters import ConversionError, convert_contextdep

from tests.util import HEADER, row

@pytest.fixture
def tsv(tmp_path):
    # Q1: 4 annotators, 2 say paraphrase (a tie counts as paraphrase).
    # Guest "my  20th time" has an empty word at index 1 (double space).
    rows = [
        row("Q1", "A", 1, "my  20th time", [1, 0, 1, 1], "doing this a while", [1, 1, 0, 1]),
        row("Q1", "B", 1, "my  20th time", [0, 0, 1, 0], "doing this a while", [0, 0, 0, 1]),
        row("Q1", "C", 0, "my  20th time", [0, 0, 0, 0], "doing this a while", [0, 0, 0, 0]),
        row("Q1", "D", 0, "my  20th time", [0, 0, 0, 0], "doing this a while", [0, 0, 0, 0]),
        # Q2: 3 annotators, 1 says paraphrase -> not a paraphrase
        row("Q2", "A", 0, "Not good.", [0, 0], "What you don't want.", [0, 0, 0, 0]),
        row("Q2", "B", 1, "Not good.", [1, 1], "What you don't want.", [0, 0, 1, 1]),
        row("Q2", "C", 0, "Not good.", [0, 0], "What you don't want.", [0, 0, 0, 0]),
    ]
    path = tmp_path / "mini.tsv"
    path.write_text(HEADER + "".join(rows), encoding="utf-8")
    return path


def test_majority_mode_follows_the_paper(tsv, nlp):
    docs, report = convert_contextdep(tsv, nlp.vocab, mode="majority")
    assert report.n_rows == 7 and len(docs) == 2
    d1, d2 = docs
    first, second = d1.spans["turns"]
    # words are kept 1:1, the empty word is a whitespace token
    assert [t.text for t in first] == ["my", " ", "20th", "time"]
    assert d1.text[first.start_char : first.end_char] == "my  20th time"
    assert d1.spans["turns"].attrs["id"] == "Q1"
    attrs = d1.spans["paraphrase"].attrs
    assert attrs["votes"] == [2, 4]
    assert attrs["highlight_counts"] == [1, 0, 2, 1, 1, 1, 0, 2]
    # denominator = the 2 paraphrase voters: >= 1 of 2 highlighted
    assert attrs["token_targets"] == [1, 0, 1, 1, 1, 1, 0, 1]
    assert d1.cats["PARAPHRASE"] == 1.0
    assert [(s.start, s.end, s.label_) for s in d1.spans["paraphrase"]] == [
        (0, 1, "SOURCE"), (2, 4, "SOURCE"), (4, 6, "PARAPHRASE"), (7, 8, "PARAPHRASE")
    ]
    # Q2: 1 of 3 -> not a paraphrase, all targets 0 even though B highlighted
    assert d2.cats["PARAPHRASE"] == 0.0
    assert d2.spans["paraphrase"].attrs["token_targets"] == [0.0] * len(d2)
    assert len(d2.spans["paraphrase"]) == 0
    assert d2.spans["paraphrase"].attrs["highlight_counts"] == [1, 1, 0, 0, 1, 1]



@pytest.mark.parametrize("mode", ["majority", "soft", "all"])
def test_paper_gold_of_a_pair_that_is_not_a_majority_paraphrase(tsv, nlp, mode):
    """The votes and counts stay on every Doc, so the scorer's paper_gold has
    the words of Q2 (1 of 3 says paraphrase; its voter's words: 1 of 1 >= 0.5),
    while the majority training targets stay 0."""
    from spacy_paraphrase.paraphrase_spans.scorer import paper_gold, reference_gold

    docs, _ = convert_contextdep(tsv, nlp.vocab, mode=mode)
    q2 = [d for d in docs if d.spans["turns"].attrs["id"] == "Q2"][0]
    pair, words = paper_gold(q2, "paraphrase")
    assert pair is False
    assert [t.text for t, w in zip(q2, words) if w] == ["Not", "good.", "don't", "want."]
    if mode == "majority":
        assert not reference_gold(q2, "paraphrase", "PARAPHRASE")[1].any()
        assert sum(q2.spans["paraphrase"].attrs["token_targets"]) == 0

def test_soft_mode_divides_by_all_annotators(tsv, nlp):
    docs, _ = convert_contextdep(tsv, nlp.vocab, mode="soft")
    d1, d2 = docs
    numpy.testing.assert_allclose(
        d1.spans["paraphrase"].attrs["token_targets"], [0.25, 0, 0.5, 0.25, 0.25, 0.25, 0, 0.5]
    )
    assert d1.cats["PARAPHRASE"] == 0.5
    assert d2.cats["PARAPHRASE"] == pytest.approx(1 / 3)
    numpy.testing.assert_allclose(
        d2.spans["paraphrase"].attrs["token_targets"], [1 / 3, 1 / 3, 0, 0, 1 / 3, 1 / 3]
    )


def test_all_mode_one_doc_per_annotation(tsv, nlp):
    docs, report = convert_contextdep(tsv, nlp.vocab, mode="all")
    assert len(docs) == 7 and report.n_docs == 7
    a = docs[0]
    assert a.spans["paraphrase"].attrs["annotator"] == "A"
    assert a.spans["paraphrase"].attrs["token_targets"] == [1, 0, 1, 1, 1, 1, 0, 1]
    assert a.spans["paraphrase"].attrs["votes"] == [2, 4]
    assert docs[2].cats["PARAPHRASE"] == 0.0
    assert sum(docs[2].spans["paraphrase"].attrs["token_targets"]) == 0


def _write(tmp_path, body, header=HEADER):
    path = tmp_path / "bad.tsv"
    path.write_text(header + body, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "body,line,reason",
    [
        (row("Q", "A", 1, "a b", [1, 0, 0], "c", [1]), 2, "has 3 values but the turn has 2 words"),
        (row("Q", "A", 1, "a b", "[1, x]", "c", [1]), 2, "not a Python list"),
        (row("Q", "A", 1, "a b", [1, 2], "c", [1]), 2, "list of 0/1"),
        (row("Q", "A", 0, "a", [0], "c", [0]) + row("Q", "A", 0, "a", [0], "c", [0]), 3, "duplicate annotation"),
        (row("Q", "A", 0, "a", [0], "c", [0]) + row("Q", "B", 0, "b", [0], "c", [0]), 3, "different texts"),
        ("Q\tA\tS\t1\ta\n", 2, "expected 8 fields"),
    ],
)
def test_bad_rows_name_file_line_and_reason(tmp_path, nlp, body, line, reason):
    path = _write(tmp_path, body)
    with pytest.raises(ConversionError) as info:
        convert_contextdep(path, nlp.vocab)
    assert info.value.line == line
    assert reason in info.value.reason
    assert str(path) in str(info.value)


def test_missing_column(tmp_path, nlp):
    path = _write(tmp_path, "", header="QID\tAnnotator\tIs Paraphrase\n")
    with pytest.raises(ConversionError, match="missing column"):
        convert_contextdep(path, nlp.vocab)


def test_skip_bad_counts_rows(tmp_path, nlp):
    body = row("Q", "A", 1, "a b", [1, 0, 0], "c", [1]) + row("R", "A", 1, "a b", [1, 0], "c", [1])
    docs, report = convert_contextdep(_write(tmp_path, body), nlp.vocab, skip_bad=True)
    assert len(docs) == 1 and len(report.skipped) == 1 and report.skipped[0].line == 2


def test_real_dev_file_if_present(nlp):
    from tests.util import DATA_DIR

    path = DATA_DIR / "contextdep" / "dev.tsv"
    if not path.exists():
        pytest.skip("ContextDeP data not available")
    docs, report = convert_contextdep(path, nlp.vocab, mode="majority")
    assert len(docs) == 88 and report.n_rows == 842
    assert sum(d.cats["PARAPHRASE"] for d in docs) == 50
    for d in docs:
        first, second = d.spans["turns"]
        assert len(d.spans["paraphrase"].attrs["token_targets"]) == len(d)


def test_non_utf8_bytes_name_the_line(tmp_path, nlp):
    path = tmp_path / "latin1.tsv"
    body = row("Q", "A", 0, "a", [0], "c", [0]) + row("R", "A", 0, "caf\xe9", [0], "c", [0])
    path.write_bytes((HEADER + body).encode("latin-1"))
    with pytest.raises(ConversionError) as info:
        convert_contextdep(path, nlp.vocab)
    assert info.value.line == 3 and "UTF-8" in info.value.reason


def test_truncated_last_line(tmp_path, nlp):
    full = row("Q", "A", 0, "a b", [0, 0], "c", [0])
    path = _write(tmp_path, full + full.replace("Q\t", "R\t")[:20])
    with pytest.raises(ConversionError) as info:
        convert_contextdep(path, nlp.vocab)
    assert info.value.line == 3 and "fields" in info.value.reason
    docs, report = convert_contextdep(path, nlp.vocab, skip_bad=True)
    assert len(docs) == 1 and len(report.skipped) == 1
