"""The converters' one row loop (``common.convert_rows``), the typed bad row of
the reader (``BadRow``, no in-band error field), and MultiPIT / ARPA as presets
of the pair-file converter."""
import pytest
import spacy
from spacy.tokens import DocBin

from spacy_paraphrase.converters import ConversionError, convert_arpa, convert_multipit, convert_pairs
from spacy_paraphrase.converters.arpa import ARPA, ARPA_NEAR
from spacy_paraphrase.converters.common import BadRow, ConversionReport, convert_rows, read_table
from spacy_paraphrase.converters.contextdep import convert_contextdep
from spacy_paraphrase.converters.multipit import MULTIPIT
from spacy_paraphrase.converters.pairs import PairPreset, convert_preset
from spacy_paraphrase.dialogs import ProblemCollector
from spacy_paraphrase.dialogs.tables import read_pair_file
from spacy_paraphrase.pair_doc import make_pair_doc
from spacy_paraphrase.table_reader import ROW_HINT


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _rows(nlp):
    def build(line, row):
        if row["a"] == "bad":
            raise ValueError("a is bad")
        if row["a"] == "out":
            return None  # left out on purpose: not a bad row
        return make_pair_doc(nlp, row["a"], row["b"])
    return [(2, {"a": "x", "b": "y"}), (3, BadRow("too few fields")), (4, {"a": "bad", "b": "y"}),
            (5, {"a": "out", "b": "y"}), (7, {"a": "z", "b": "w"})], build


def test_convert_rows_reads_checks_builds_and_reports(nlp):
    rows, build = _rows(nlp)
    report = ConversionReport()
    docs = convert_rows("f.tsv", rows, build, report, skip_bad=True)
    assert [d.spans["turns"][0].text for d in docs] == ["x", "z"]
    assert report.n_rows == 5
    assert [(e.line, e.reason) for e in report.skipped] == [(3, "too few fields"), (4, "a is bad")]
    assert str(report.skipped[0]) == "f.tsv, line 3: too few fields"
    with pytest.raises(ConversionError) as info:
        convert_rows("f.tsv", rows, build, ConversionReport(), skip_bad=False)
    assert (info.value.line, info.value.reason) == (3, "too few fields")


def test_the_reader_yields_a_typed_bad_row(tmp_path):
    path = write(tmp_path, "t.csv", "a,b,c\n1,2,3\n4,5\n6,7,8,9\n")
    rows = list(read_table(path, ",", ["a", "c"]))
    assert rows[0] == (2, {"a": "1", "c": "3"})
    assert rows[1] == (3, BadRow(f"expected 3 fields, found 2 ({ROW_HINT})"))
    assert rows[2] == (4, BadRow(f"expected 3 fields, found 4 ({ROW_HINT})"))
    assert not any(isinstance(row, dict) and "__error__" in row for _, row in rows)
    headerless = list(read_table(path, ",", {"x": 0}, header=False))
    assert headerless[2] == (3, BadRow(f"expected 3 fields (as line 1), found 2 ({ROW_HINT})"))
    with pytest.raises(ConversionError, match=r"missing column\(s\) \['d'\]") as info:
        list(read_table(path, ",", ["a", "d"]))
    assert info.value.line == 1


STRAY_QUOTE = 'sentence1,sentence2,label\nfirst a,second a,1\n"first b,second b,0\nfirst c,second c,1\nfirst d,second d,0\n'


def test_a_stray_quote_costs_its_own_row_only_and_converters_and_dialog_readers_agree(tmp_path, nlp):
    """One table reader: the converter and the dialog pair reader leave out the
    same row for the same reason and keep the rows after it (a quote left open
    no longer swallows the rest of the file)."""
    path = write(tmp_path, "p.csv", STRAY_QUOTE)
    docs, report = convert_pairs(path, nlp.vocab, skip_bad=True)
    assert [d.spans["turns"][0].text for d in docs] == ["first a", "first c", "first d"]
    problems = ProblemCollector()
    pairs = list(read_pair_file(path, on_problem=problems))
    assert [p.first.text for p in pairs] == ["first a", "first c", "first d"]
    assert [(e.line, e.reason) for e in report.skipped] == [(p.line, p.reason) for p in problems.problems]
    assert report.skipped[0].line == 3 and "unreadable record" in report.skipped[0].reason


def test_the_converters_refuse_what_the_dialog_readers_refuse_in_json_lines(tmp_path, nlp):
    path = write(tmp_path, "p.jsonl", '{"text1": "a", "text2": "b", "text1": "c"}\n{"text1": "d", "text2": "e"}\n')
    docs, report = convert_pairs(path, nlp.vocab, text1="text1", text2="text2", label=None, skip_bad=True)
    assert [d.spans["turns"][0].text for d in docs] == ["d"]
    assert report.skipped[0].line == 1 and "given twice" in report.skipped[0].reason


def test_contextdep_field_count_error_carries_the_hint(tmp_path):
    header = "QID\tAnnotator\tSession\tIs Paraphrase\tGuest Tokens\tGuest Highlights\tHost Tokens\tHost Highlights\n"
    path = write(tmp_path, "c.tsv", header + "Q\tA\tS\t1\ta\n")
    with pytest.raises(ConversionError) as info:
        convert_contextdep(path, spacy.blank("en").vocab)
    assert info.value.reason == f"expected 8 fields, found 5 ({ROW_HINT})"


def _bytes(docs):
    return DocBin(docs=docs, store_user_data=True).to_bytes()


MULTIPIT_CSV = 'sentence1,sentence2,label\n a b ,c d,1\n"e, f",g,0\nh,i,1\n'
ARPA_TSV = "Sentence1\tSentence2\tParaphrase\nԱ բ:\tԳ դ:\t1\nԵ զ:\tԷ ը:\t0\nԹ ժ:\tԻ լ:\t-1\n"


def test_multipit_is_a_preset_of_the_pair_file_converter(tmp_path, nlp):
    path = write(tmp_path, "m.csv", MULTIPIT_CSV)
    docs, report = convert_multipit(path, nlp.vocab)
    same, _ = convert_pairs(path, nlp.vocab, delimiter=",", label_map=MULTIPIT.label_map)
    assert _bytes(docs) == _bytes(same)
    assert convert_preset(MULTIPIT, path, nlp.vocab)[0][0].cats == {"IS_PARAPHRASE": 1.0, "NOT_PARAPHRASE": 0.0}
    assert (report.n_rows, report.n_docs, report.notes) == (3, 3, [])


def test_arpa_is_a_preset_that_keeps_the_raw_value(tmp_path, nlp):
    path = write(tmp_path, "a.tsv", ARPA_TSV)
    for keep_near, preset in ((False, ARPA), (True, ARPA_NEAR)):
        docs, report = convert_arpa(path, nlp.vocab, keep_near=keep_near)
        same, _ = convert_pairs(path, nlp.vocab, text1="Sentence1", text2="Sentence2", label="Paraphrase",
                                label_map=preset.label_map)
        for doc, raw in zip(same, ["1", "0", "-1"]):
            doc.spans["turns"].attrs["raw"] = raw
        assert _bytes(docs) == _bytes(same)
        assert report.notes == list(preset.notes)
    assert ARPA.notes and not ARPA_NEAR.notes


def test_a_preset_reports_its_own_label_error(tmp_path, nlp):
    preset = PairPreset(text1="q", text2="r", label="y", delimiter="\t", label_map={"yes": "Y", "no": "N"},
                        label_error="y must be yes or no, got {raw!r}")
    path = write(tmp_path, "p.txt", "q\tr\ty\na\tb\tyes\nc\td\t\ne\tf\tmaybe\n")
    docs, report = convert_preset(preset, path, nlp.vocab, skip_bad=True)
    assert [d.cats for d in docs] == [{"Y": 1.0, "N": 0.0}]
    assert [(e.line, e.reason) for e in report.skipped] == [
        (3, "y must be yes or no, got ''"), (4, "y must be yes or no, got 'maybe'")]
    with pytest.raises(ConversionError, match="label must be 0 or 1, got ''"):
        convert_multipit(write(tmp_path, "m.csv", "sentence1,sentence2,label\na,b,\n"), nlp.vocab)


def test_old_mac_line_ends_are_line_ends_for_dialog_readers_too(tmp_path, nlp):
    body = "sentence1,sentence2,label\rfirst a,second a,1\rfirst b,second b,0\r"
    path = tmp_path / "mac.csv"
    path.write_bytes(body.encode("utf-8"))
    assert [p.first.text for p in read_pair_file(path)] == ["first a", "first b"]
    assert len(convert_pairs(path, nlp.vocab)[0]) == 2
    jsonl = tmp_path / "mac.jsonl"
    jsonl.write_bytes(b'{"text1": "a", "text2": "b"}\r{"text1": "c", "text2": "d"}\r')
    assert [p.second.text for p in read_pair_file(jsonl)] == ["b", "d"]
