"""Turn tables and ready-made pair files (CSV / TSV / JSON Lines)."""
import json

import pytest

from spacy_paraphrase.dialogs import DialogFormatError, ProblemCollector, read_turn_pairs
from spacy_paraphrase.dialogs.tables import read_pair_file, read_turn_table
from spacy_paraphrase.table_reader import find_pair_columns


def write_jsonl(path, records):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def ids(conversations):
    return {c.id: [u.id for u in c.utterances] for c in conversations}


def test_csv_table_unsorted_with_order_column(tmp_path):
    path = tmp_path / "turns.csv"
    path.write_text(
        "conversation_id,speaker,text,n,channel\n"
        "B,bob,b later,2,x\n"
        "A,ann,a second,10,x\n"
        "B,amy,b first,1,y\n"
        'A,ann,"a first, with a comma\nand a newline",9.5,x\n'
        "A,bob,a third,11,x\n"
    )
    conversations = list(read_turn_table(path, order_column="n"))
    assert [c.id for c in conversations] == ["B", "A"]
    b, a = conversations
    assert [u.text for u in a.utterances] == ["a first, with a comma\nand a newline", "a second", "a third"]
    assert [u.id for u in a.utterances] == ["A-0", "A-1", "A-2"]  # positions after ordering
    assert [u.line for u in a.utterances] == [5, 3, 7]
    assert a.utterances[0].meta == {"channel": "x"}
    assert [u.text for u in b.utterances] == ["b first", "b later"]
    # without the order column: file order
    assert ids(read_turn_table(path))["A"] == ["A-0", "A-1", "A-2"]
    assert [u.text for u in next(c for c in read_turn_table(path) if c.id == "A").utterances][0] == "a second"
    pairs = list(read_turn_pairs(path, "turns", order_column="n"))
    assert [(p.conversation_id, p.pair_id) for p in pairs] == [("B", "B-0"), ("A", "A-0")]
    assert pairs[1].first.text == "a first, with a comma\nand a newline a second"


def test_order_ties_keep_file_order(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", [
        {"conversation_id": "A", "speaker": "x", "text": "one", "t": 1},
        {"conversation_id": "A", "speaker": "y", "text": "two", "t": "1"},
        {"conversation_id": "A", "speaker": "z", "text": "zero", "t": 0.5},
    ])
    (conversation,) = read_turn_table(path, order_column="t")
    assert [u.text for u in conversation.utterances] == ["zero", "one", "two"]


def test_tsv_column_overrides_id_and_reply_to(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text("dialog\twho\tsaid\tid\treply-to\nd1\tP\thello\tm1\t\nd1\tQ\thi\tm2\tm1\n")
    columns = {"conversation_column": "dialog", "speaker_column": "who", "text_column": "said"}
    (conversation,) = read_turn_table(path, **columns)
    assert [(u.id, u.speaker, u.text, u.reply_to) for u in conversation.utterances] == [
        ("m1", "P", "hello", None), ("m2", "Q", "hi", "m1")]
    assert conversation.utterances[0].meta == {}
    assert [p.pair_id for p in read_turn_pairs(path, "turns", mode="reply-to", **columns)] == ["m1>m2"]


def test_missing_columns_is_a_clear_error(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("conversation,speaker,text\nA,x,y\n")
    with pytest.raises(DialogFormatError, match=r"missing column\(s\) \['conversation_id'\]"):
        list(read_turn_table(path))
    with pytest.raises(DialogFormatError, match=r"missing column\(s\) \['n'\]"):
        list(read_turn_table(path, conversation_column="conversation", order_column="n"))


def test_table_malformed_rows_are_reported(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(
        b"conversation_id,speaker,text,n\n"
        b"A,x,ok,1\n"
        b"A,y,too,many,fields\n"
        b"A,y,bad order,soon\n"
        b",y,no conversation,3\n"
        b"A,y,\xff\xfe not utf-8,4\n"
        b"A,y,,5\n"
        b'A,y,"two lines,\n\xff broken",5.5\n'
        b"A,x,last,6\n"
    )
    problems = ProblemCollector()
    (conversation,) = read_turn_table(path, order_column="n", on_problem=problems)
    assert [u.text for u in conversation.utterances] == ["ok", "", "last"]  # empty text kept
    reasons = {p.line: p.reason for p in problems.problems}
    assert sorted(reasons) == [3, 4, 5, 6, 9]  # line 9: the bad second line of a quoted text
    assert "expected 4 fields" in reasons[3]
    assert "n must be a number" in reasons[4]
    assert "conversation_id is empty" in reasons[5]
    assert "not valid UTF-8" in reasons[6]
    assert all(p.path == str(path) for p in problems.problems)


def test_jsonl_table_problems(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", [
        {"conversation_id": 7, "speaker": "x", "text": "int ids are fine"},
        {"conversation_id": 7, "speaker": "y"},
        {"conversation_id": 7, "speaker": ["y"], "text": "t"},
        {"conversation_id": 7, "speaker": "y", "text": "dup", "id": "7-0"},
        {"conversation_id": 7, "speaker": "y", "text": "end"},
    ])
    problems = ProblemCollector()
    (conversation,) = read_turn_table(path, on_problem=problems)
    assert conversation.id == "7"
    assert [u.text for u in conversation.utterances] == ["int ids are fine", "end"]
    assert [p.line for p in problems.problems] == [2, 3, 4]
    assert "missing field 'text'" in problems.problems[0].reason
    assert "speaker must be a string, got list" in problems.problems[1].reason
    assert "repeated" in problems.problems[2].reason


# -- pair files -------------------------------------------------------------------------


def test_find_pair_columns():
    assert find_pair_columns(["label", "Sentence1", "Sentence2"]) == ("Sentence1", "Sentence2")
    assert find_pair_columns(["text1", "text2", "sentence1", "sentence2"]) == ("sentence1", "sentence2")
    assert find_pair_columns(["text1", "x"]) is None


def test_pair_files_csv_tsv_jsonl(tmp_path):
    (tmp_path / "p.csv").write_text("sentence1,sentence2,label\n  A cat. ,A feline.,1\nx,,0\n")
    (tmp_path / "p.tsv").write_text("id\ttext1\ttext2\nq1\tone\ttwo\n")
    write_jsonl(tmp_path / "p.jsonl", [{"a": "left", "b": "right", "score": 0.5}])
    csv_pairs = list(read_pair_file(tmp_path / "p.csv"))
    assert [p.pair_id for p in csv_pairs] == ["p:2", "p:3"]
    first = csv_pairs[0]
    assert (first.first.text, first.second.text) == ("  A cat. ", "A feline.")  # verbatim
    assert first.first.utterance_ids == ["p:2-0"] and first.second.utterance_ids == ["p:2-1"]
    assert first.first.speaker is None and first.meta == {"label": "1"}
    assert csv_pairs[1].second.text == ""  # kept: annotate reports it
    (tsv_pair,) = read_pair_file(tmp_path / "p.tsv", id_column="id")
    assert (tsv_pair.pair_id, tsv_pair.conversation_id, tsv_pair.meta) == ("q1", "q1", {})
    (jsonl_pair,) = read_turn_pairs(tmp_path / "p.jsonl", "pairs", text1="a", text2="b")
    assert (jsonl_pair.first.text, jsonl_pair.second.text) == ("left", "right")
    assert jsonl_pair.meta == {"score": 0.5}
    with pytest.raises(DialogFormatError, match="together"):  # one alone would be ignored
        list(read_pair_file(tmp_path / "p.jsonl", text1="a"))


def test_pair_file_problems(tmp_path):
    path = write_jsonl(tmp_path / "p.jsonl", [
        {"id": "1", "text1": "a", "text2": "b"},
        {"id": "2", "text1": "a"},
        {"id": "3", "text1": "a", "text2": None},
        {"id": "1", "text1": "c", "text2": "d"},
        {"id": "4", "text1": "e", "text2": "f"},
    ])
    problems = ProblemCollector()
    pairs = list(read_pair_file(path, id_column="id", on_problem=problems))
    assert [p.pair_id for p in pairs] == ["1", "4"]
    assert [(p.line, p.reason) for p in problems.problems] == [
        (2, "missing field 'text2'"), (3, "text2 must be a string, got null"), (4, "pair id '1' repeated")]
    (tmp_path / "q.csv").write_text("a,b\nx,y\n")
    with pytest.raises(DialogFormatError, match="pass text1 and text2"):
        list(read_pair_file(tmp_path / "q.csv"))


def test_pair_file_id_column_is_the_pair_id_without_being_told(tmp_path):
    (tmp_path / "p.tsv").write_text("id\ttext1\ttext2\tlabel\nq1\tone\ttwo\t1\nq2\tthree\tfour\t0\n")
    write_jsonl(tmp_path / "p.jsonl", [{"id": "a7", "text1": "x", "text2": "y"}, {"text1": "u", "text2": "v"}])
    tsv = list(read_pair_file(tmp_path / "p.tsv"))
    assert [(p.pair_id, p.meta) for p in tsv] == [("q1", {"label": "1"}), ("q2", {"label": "0"})]
    assert tsv[0].first.utterance_ids == ["q1-0"]
    jsonl = list(read_pair_file(tmp_path / "p.jsonl"))
    assert [(p.pair_id, p.meta) for p in jsonl] == [("a7", {}), ("p:2", {})]  # a row without one: file:line
    (tmp_path / "n.tsv").write_text("text1\ttext2\nx\ty\n")
    assert [p.pair_id for p in read_pair_file(tmp_path / "n.tsv")] == ["n:2"]


def test_pair_file_refuses_a_given_id_that_a_made_id_took_and_the_reverse(tmp_path):
    """Made ids ({stem}:{line}) are kept as line numbers only (PairIds), yet a
    given id equal to one of them, before or after it, is still a repeat."""
    path = write_jsonl(tmp_path / "p.jsonl", [
        {"text1": "a", "text2": "b"},                 # line 1: made id p:1
        {"id": "p:1", "text1": "c", "text2": "d"},    # repeats it
        {"id": "p:4", "text1": "e", "text2": "f"},    # given first ...
        {"text1": "g", "text2": "h"},                 # ... line 4 makes p:4: repeated
        {"id": "p:05", "text1": "i", "text2": "j"},   # not p:5
        {"text1": "k", "text2": "l"},                 # line 6: p:6
    ])
    problems = ProblemCollector()
    pairs = list(read_pair_file(path, on_problem=problems))
    assert [p.pair_id for p in pairs] == ["p:1", "p:4", "p:05", "p:6"]
    assert [(p.line, p.reason) for p in problems.problems] == [
        (2, "pair id 'p:1' repeated"), (4, "pair id 'p:4' repeated")]
