"""Hostile records the readers must report, never guess at nor die on (issue 29)."""
import json

import pytest

from spacy_paraphrase.dialogs import DialogFormatError, ProblemCollector, read_turn_pairs
from spacy_paraphrase.dialogs.convokit import read_convokit
from spacy_paraphrase.dialogs.readers import read_chat
from spacy_paraphrase.dialogs.tables import read_pair_file, read_turn_table
from spacy_paraphrase.table_reader import MAX_JSON_DEPTH


def write_lines(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def chat_line(conversation_id, *texts):
    return json.dumps({"id": conversation_id, "messages": [
        {"role": "ab"[i % 2], "content": text} for i, text in enumerate(texts)]})


def test_json_nested_tens_of_thousands_deep_is_one_malformed_record(tmp_path):
    deep = '{"id": "deep", "messages": ' + "[" * 50000 + "]" * 50000 + "}"
    near_the_limit = '{"id": "near", "messages": [], "x": ' + "[" * 990 + "]" * 990 + "}"
    path = write_lines(tmp_path / "chat.jsonl", [chat_line("a", "hi", "ho"), deep, near_the_limit,
                                                 chat_line("b", "hey", "you")])
    problems = ProblemCollector()
    assert [c.id for c in read_chat(path, on_problem=problems)] == ["a", "b"]
    assert [p.line for p in problems.problems] == [2, 3]
    assert all(f"more than {MAX_JSON_DEPTH} levels" in p.reason for p in problems.problems)


def test_json_nesting_up_to_the_limit_is_read(tmp_path):
    record = {"id": "ok", "messages": [{"role": "a", "content": "hi", "deep": [[[]]]}]}
    path = write_lines(tmp_path / "chat.jsonl", [json.dumps(record)])
    problems = ProblemCollector()
    assert [c.id for c in read_chat(path, on_problem=problems)] == ["ok"] and not problems.problems


@pytest.mark.parametrize("tail", ["", "\n"])
def test_csv_quote_left_open_swallows_no_rows(tmp_path, tail):
    path = tmp_path / "turns.csv"
    path.write_text('conversation_id,speaker,text\nd1,ann,"Where were you?\nd1,bob,At home.\n'
                    'd2,cid,Hello.\nd2,dan,Hi.' + tail, encoding="utf-8")
    problems = ProblemCollector()
    conversations = list(read_turn_table(path, on_problem=problems))
    assert [[u.text for u in c.utterances] for c in conversations] == [["At home."], ["Hello.", "Hi."]]
    assert [p.line for p in problems.problems] == [2]
    assert "unexpected end of data" in problems.problems[0].reason
    assert "reading goes on at line 3" in problems.problems[0].reason


def test_csv_quote_closed_rows_later_is_reported_not_merged(tmp_path):
    # the open quote on line 2 is closed by the quote that opens line 3's text
    path = tmp_path / "turns.csv"
    path.write_text('conversation_id,speaker,text\nd1,ann,"Where were you?\nd1,bob,"At home."\n'
                    'd1,ann,"All day?"\n', encoding="utf-8")
    problems = ProblemCollector()
    (conversation,) = read_turn_table(path, on_problem=problems)
    assert [u.text for u in conversation.utterances] == ["At home.", "All day?"]
    assert [p.line for p in problems.problems] == [2]


def test_csv_quoted_text_over_two_lines_is_one_record(tmp_path):
    path = tmp_path / "turns.csv"
    path.write_text('conversation_id,speaker,text\nd1,ann,"two\nlines"\nd1,bob,ok\n', encoding="utf-8")
    problems = ProblemCollector()
    (conversation,) = read_turn_table(path, on_problem=problems)
    assert [u.text for u in conversation.utterances] == ["two\nlines", "ok"] and not problems.problems


def test_pair_file_quote_left_open_is_reported(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text('sentence1\tsentence2\n"It rained.\tIt was wet.\nA cat.\tThe cat.\n', encoding="utf-8")
    problems = ProblemCollector()
    pairs = list(read_pair_file(path, on_problem=problems))
    assert [(p.first.text, p.second.text) for p in pairs] == [("A cat.", "The cat.")]
    assert [p.line for p in problems.problems] == [2]


@pytest.mark.parametrize("header", ["conversation_id,speaker,text,text", "conversation_id,speaker,text, speaker"])
def test_turn_table_with_a_column_named_twice_is_refused(tmp_path, header):
    path = tmp_path / "turns.csv"
    path.write_text(header + "\nd1,ann,hello,bye\n", encoding="utf-8")
    with pytest.raises(DialogFormatError, match="more than once"):
        list(read_turn_table(path, on_problem=ProblemCollector()))


def test_pair_file_with_a_column_named_twice_is_refused(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text("sentence1,sentence2,sentence2\na,b,c\n", encoding="utf-8")
    with pytest.raises(DialogFormatError, match=r"\['sentence2'\] more than once"):
        list(read_pair_file(path, on_problem=ProblemCollector()))


def test_convokit_ids_of_different_json_types_are_not_merged(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    rows = [{"id": "u1", "conversation_id": 1, "speaker": "a", "text": "one"},
            {"id": "u2", "conversation_id": "1", "speaker": "b", "text": "other conversation"},
            {"id": "u3", "conversation_id": 1, "speaker": "b", "text": "two"}]
    write_lines(folder / "utterances.jsonl", [json.dumps(r) for r in rows])
    problems = ProblemCollector()
    pairs = list(read_turn_pairs(folder, on_problem=problems))
    assert [(p.first.text, p.second.text) for p in pairs] == [("one", "two")]
    assert [p.line for p in problems.problems] == [2]
    assert "is a string here but a number" in problems.problems[0].reason
    assert [c.id for c in read_convokit(folder, on_problem=ProblemCollector())] == ["1"]


def test_turn_table_ids_of_different_json_types_are_not_merged(tmp_path):
    rows = [{"conversation_id": "7", "speaker": "a", "text": "one"},
            {"conversation_id": 7, "speaker": "b", "text": "other"},
            {"conversation_id": "7", "speaker": "b", "text": "two"}]
    path = write_lines(tmp_path / "turns.jsonl", [json.dumps(r) for r in rows])
    problems = ProblemCollector()
    (conversation,) = read_turn_table(path, on_problem=problems)
    assert [u.text for u in conversation.utterances] == ["one", "two"]
    assert [p.line for p in problems.problems] == [2]


def test_csv_record_over_lines_with_the_wrong_width_is_read_again_from_its_second_line(tmp_path):
    # line 2's open quote is closed on line 3 and the record reads as 4 fields:
    # line 3 is read again (and is malformed itself), nothing is silently gone
    path = tmp_path / "turns.csv"
    path.write_text('conversation_id,speaker,text\nd1,ann,"Where\nd1,bob,",x\nd1,ann,"All day"\n', encoding="utf-8")
    problems = ProblemCollector()
    (conversation,) = read_turn_table(path, on_problem=problems)
    assert [u.text for u in conversation.utterances] == ["All day"]
    assert [p.line for p in problems.problems] == [2, 3]
    assert "expected 3 fields (as the header), found 4" in problems.problems[0].reason


def test_a_key_given_twice_in_a_json_record_is_malformed_not_last_wins(tmp_path):
    path = write_lines(tmp_path / "chat.jsonl", [
        chat_line("a", "hi", "ho"),
        '{"id": "b", "messages": [{"role": "a", "content": "first", "content": "second"}, {"role": "b", "content": "x"}]}',
        '{"id": "c", "id": "d", "messages": []}',
        chat_line("e", "hey", "you")])
    problems = ProblemCollector()
    assert [c.id for c in read_chat(path, on_problem=problems)] == ["a", "e"]
    assert [p.line for p in problems.problems] == [2, 3]
    assert "key 'content' given twice" in problems.problems[0].reason
    rows = [{"conversation_id": "d1", "speaker": "a", "text": "one"},
            '{"conversation_id": "d1", "speaker": "b", "text": "two", "text": "three"}']
    table = write_lines(tmp_path / "turns.jsonl", [r if isinstance(r, str) else json.dumps(r) for r in rows])
    problems = ProblemCollector()
    (conversation,) = read_turn_table(table, on_problem=problems)
    assert [u.text for u in conversation.utterances] == ["one"] and [p.line for p in problems.problems] == [2]
