"""ConvoKit, MediaSum-style and chat readers; format guessing."""
import json

import pytest

from spacy_paraphrase.dialogs import (
    DialogFormatError,
    MalformedRecordError,
    ProblemCollector,
    guess_format,
    read_convokit_speakers,
    read_turn_pairs,
)
from spacy_paraphrase.dialogs.convokit import read_convokit
from spacy_paraphrase.dialogs.readers import read_chat, read_dialogs, read_mediasum, unify_speaker_names


def write_jsonl(path, records):
    with open(path, "w", encoding="utf-8") as fh:
        for record in records:
            fh.write(record if isinstance(record, str) else json.dumps(record))
            fh.write("\n")
    return path


def utt(uid, conv, speaker, text, reply_to=None, **extra):
    return {"id": uid, "speaker": speaker, "conversation_id": conv, "reply-to": reply_to,
            "timestamp": None, "text": text, "meta": {}, **extra}


def convokit_dir(tmp_path, records):
    folder = tmp_path / "corpus"
    folder.mkdir()
    write_jsonl(folder / "utterances.jsonl", records)
    return folder


# -- ConvoKit -------------------------------------------------------------------


def test_convokit_fields_and_aliases(tmp_path):
    folder = convokit_dir(tmp_path, [
        utt("a0", "A", "HOST", "Welcome.", meta={"is_host": True}, timestamp=5),
        # ConvoKit's older spellings: user, root, reply_to
        {"id": "a1", "user": "GUEST", "root": "A", "reply_to": "a0", "text": "Thanks.", "meta": {}},
    ])
    (conversation,) = read_convokit(folder)
    first, second = conversation.utterances
    assert conversation.id == "A"
    assert (first.id, first.speaker, first.text) == ("a0", "HOST", "Welcome.")
    assert (first.reply_to, first.timestamp) == (None, 5)
    assert first.meta == {"is_host": True}
    assert (second.speaker, second.conversation_id, second.reply_to) == ("GUEST", "A", "a0")
    assert (second.path, second.line) == (str(folder / "utterances.jsonl"), 2)
    # the utterances.jsonl path itself works too
    assert [c.id for c in read_convokit(folder / "utterances.jsonl")] == ["A"]


def test_convokit_interleaved_conversations_are_grouped(tmp_path):
    folder = convokit_dir(tmp_path, [
        utt("a0", "A", "H", "a zero"),
        utt("b0", "B", "H", "b zero"),
        utt("a1", "A", "G", "a one", "a0"),
        utt("c0", "C", "H", "c zero"),
        utt("b1", "B", "G", "b one", "b0"),
        utt("a2", "A", "H", "a two", "a1"),
    ])
    conversations = {c.id: [u.id for u in c.utterances] for c in read_convokit(folder)}
    assert conversations == {"A": ["a0", "a1", "a2"], "B": ["b0", "b1"], "C": ["c0"]}
    # first-appearance order of the conversations
    assert [c.id for c in read_convokit(folder)] == ["A", "B", "C"]
    # pairs never join two conversations, even where the file interleaves them
    for pair in read_turn_pairs(folder):
        ids = pair.first.utterance_ids + pair.second.utterance_ids
        assert {i[0] for i in ids} == {pair.conversation_id.lower()}
    assert [p.pair_id for p in read_turn_pairs(folder)] == ["a0", "a1", "b0"]


def test_convokit_second_pass_seeks_per_conversation(tmp_path, monkeypatch):
    """Texts are not kept from the first pass: each conversation's records are
    read back (by byte offset) only when that conversation is produced."""
    from spacy_paraphrase.dialogs import convokit

    folder = convokit_dir(tmp_path, [utt("a0", "A", "H", "x"), utt("b0", "B", "H", "y"),
                                      utt("a1", "A", "G", "z"), utt("b1", "B", "G", "w")])
    seeks = []

    def spy(fh, start, end):
        seeks.append(start)
        return read_json_at(fh, start, end)

    read_json_at = convokit.read_json_at
    monkeypatch.setattr(convokit, "read_json_at", spy)
    conversations = read_convokit(folder)
    assert [u.text for u in next(conversations).utterances] == ["x", "z"]
    lines = (folder / "utterances.jsonl").read_bytes().splitlines(keepends=True)
    offsets = [sum(len(line) for line in lines[:i]) for i in range(4)]
    assert seeks == [offsets[0], offsets[2]]
    assert [u.text for u in next(conversations).utterances] == ["y", "w"]
    assert seeks[2:] == [offsets[1], offsets[3]]


def test_convokit_by_timestamp(tmp_path):
    folder = convokit_dir(tmp_path, [
        utt("x", "A", "H", "late", timestamp=30),
        utt("y", "A", "G", "early", timestamp=10),
        utt("z", "A", "H", "tie", timestamp=30),
    ])
    assert [u.id for u in next(read_convokit(folder)).utterances] == ["x", "y", "z"]
    assert [u.id for u in next(read_convokit(folder, by_timestamp=True)).utterances] == ["y", "x", "z"]


def test_convokit_malformed_records_are_reported_and_reading_continues(tmp_path):
    folder = convokit_dir(tmp_path, [
        utt("a0", "A", "H", "ok"),
        '{"id": "a1", "speaker": ',  # truncated
        utt("a2", "A", "G", 42),  # non-string text
        {"id": "a3", "conversation_id": "A", "text": "no speaker"},
        utt("a4", "A", "G", "   "),  # whitespace-only text: kept
        utt("a0", "A", "G", "repeated id"),
        "[1, 2]",
        utt("a5", None, "G", "null conversation"),
        utt("a6", "A", "H", "end"),
        {"id": "a7", "conversation_id": "A", "speaker": "G", "text": "x", "meta": []},  # falsy, not an object
        {"id": "a8", "conversation_id": "A", "speaker": "H", "text": "y", "meta": None},  # null: no meta
    ])
    problems = ProblemCollector()
    (conversation,) = read_convokit(folder, on_problem=problems)
    assert [u.id for u in conversation.utterances] == ["a0", "a4", "a6", "a8"]
    assert conversation.utterances[-1].meta == {}
    assert conversation.utterances[1].text == "   "
    path = str(folder / "utterances.jsonl")
    found = {(p.path, p.line): p.reason for p in problems.problems}
    assert set(found) == {(path, n) for n in (2, 3, 4, 6, 7, 8, 10)}
    assert "not valid JSON" in found[(path, 2)]
    assert "text must be a string, got number" in found[(path, 3)]
    assert "missing field 'speaker'" in found[(path, 4)]
    assert "repeated" in found[(path, 6)]
    assert "expected a JSON object" in found[(path, 7)]
    assert "conversation_id must be a string, got null" in found[(path, 8)]
    assert "meta must be an object, got list" in found[(path, 10)]
    assert problems.count == len(problems) == 7


def test_without_callback_the_first_problem_raises(tmp_path):
    folder = convokit_dir(tmp_path, [utt("a0", "A", "H", "ok"), "not json"])
    with pytest.raises(MalformedRecordError, match=r"utterances.jsonl, line 2: not valid JSON") as info:
        list(read_convokit(folder))
    assert info.value.problem.line == 2


def test_convokit_speakers(tmp_path):
    folder = convokit_dir(tmp_path, [utt("a0", "A", "H", "ok")])
    (folder / "speakers.json").write_text(json.dumps({
        "H": {"meta": {"role": "host", "age": 50}, "vectors": []},
        "G": {"meta": {"role": "guest"}, "vectors": []},
    }))
    assert read_convokit_speakers(folder) == {"H": {"role": "host", "age": 50}, "G": {"role": "guest"}}
    assert read_convokit_speakers(folder, fields=["role"])["H"] == {"role": "host"}
    (folder / "speakers.json").unlink()
    (folder / "users.json").write_text(json.dumps({"H": {"role": "host"}}))  # old layout: meta directly
    assert read_convokit_speakers(folder) == {"H": {"role": "host"}}


def test_convokit_missing_file_is_a_clear_error(tmp_path):
    (tmp_path / "utterances.json").write_text("[]")
    with pytest.raises(DialogFormatError, match=r"only utterances.jsonl is read, not utterances.json"):
        list(read_convokit(tmp_path))


def test_convokit_files_of_a_folder_and_of_a_file_named_on_its_own(tmp_path):
    """What a run fingerprints (resume) and keeps its outputs apart from: a
    corpus folder's read files, or the one file named with ``--format convokit``."""
    from spacy_paraphrase.dialogs.readers import reader_for

    folder = convokit_dir(tmp_path, [utt("a0", "A", "H", "ok")])
    files = reader_for("convokit").files
    assert files(folder) == files(folder / "utterances.jsonl") == [folder / "utterances.jsonl"]
    other = folder / "talks.jsonl"
    other.write_text((folder / "utterances.jsonl").read_text())
    assert files(other) == [other]


# -- MediaSum ---------------------------------------------------------------------


def test_mediasum_ids_meta_and_reply_chain(tmp_path):
    path = write_jsonl(tmp_path / "news.jsonl", [
        {"id": "NPR-4", "program": "News & Notes", "date": "2007-11-30", "url": "u", "title": "t",
         "summary": "s", "utt": ["Hello.", "Hi.", ""], "speaker": ["HOST", "GUEST", "HOST"]},
    ])
    (conversation,) = read_mediasum(path)
    assert conversation.id == "NPR-4"
    assert conversation.meta == {
        "program": "News & Notes", "date": "2007-11-30", "url": "u", "title": "t", "summary": "s"}
    assert [u.id for u in conversation.utterances] == ["NPR-4-0", "NPR-4-1", "NPR-4-2"]
    assert [u.reply_to for u in conversation.utterances] == [None, "NPR-4-0", "NPR-4-1"]
    assert conversation.utterances[2].text == ""  # empty texts are kept
    assert {u.line for u in conversation.utterances} == {1}


def test_mediasum_ids_match_contextdep_qids(tmp_path):
    """ContextDeP's QID CNN-177596-7 is the 0-based index of the guest's first
    utterance; its released texts ("This is not good." / the host's reply)."""
    texts = [f"filler {i}." for i in range(7)] + [
        "This is not good.", "This is what you don't want happening with your menorah, folks.", "Right."]
    speakers = ["HOST", "JOHNS"] * 3 + ["HOST", "JOHNS", "HOST", "JOHNS"]
    path = write_jsonl(tmp_path / "news.jsonl", [{"id": "CNN-177596", "utt": texts, "speaker": speakers}])
    pairs = {p.pair_id: p for p in read_turn_pairs(path)}
    pair = pairs["CNN-177596-7"]
    assert pair.first.text == "This is not good."
    assert pair.second.text == "This is what you don't want happening with your menorah, folks."
    assert (pair.first.speaker, pair.second.speaker) == ("JOHNS", "HOST")


def test_mediasum_malformed_lines(tmp_path):
    path = write_jsonl(tmp_path / "news.jsonl", [
        {"id": "C-1", "utt": ["a", "b"], "speaker": ["H"]},  # different lengths: dropped
        {"id": "C-2", "utt": ["a", None, "c"], "speaker": ["H", "G", "G"]},  # one bad utterance
        {"utt": [], "speaker": []},  # no id
        {"id": "C-3", "utt": "a", "speaker": ["H"]},
        "garbage",
        {"id": "C-2", "utt": [], "speaker": []},  # repeated conversation id
        {"id": "C-4", "utt": ["x"], "speaker": ["H"]},
    ])
    problems = ProblemCollector()
    conversations = list(read_mediasum(path, on_problem=problems))
    assert [c.id for c in conversations] == ["C-2", "C-4"]
    assert [u.id for u in conversations[0].utterances] == ["C-2-0", "C-2-2"]
    reasons = {p.line: p.reason for p in problems.problems}
    assert sorted(reasons) == [1, 2, 3, 4, 5, 6]
    assert "'utt' has 2 items but 'speaker' has 1" in reasons[1]
    assert "utt[1] must be a string, got null" in reasons[2] and "C-2-1 left out" in reasons[2]
    assert "missing field 'id'" in reasons[3]
    assert "utt must be a list" in reasons[4]
    assert "not valid JSON" in reasons[5]
    assert "repeated" in reasons[6]


def test_mediasum_streams_conversations(tmp_path):
    """The first conversation comes out before a later line is read."""
    path = write_jsonl(tmp_path / "news.jsonl", [{"id": "C-1", "utt": ["a"], "speaker": ["H"]}, "garbage"])
    conversations = read_mediasum(path)
    assert next(conversations).id == "C-1"
    with pytest.raises(MalformedRecordError):
        next(conversations)


def test_unify_speaker_names():
    names = ["MADELEINE BRAND, host", "Mr. RANDY HALL", "STEVE PROFFITT", "PROFFITT"]
    assert unify_speaker_names(names) == names[:3] + ["STEVE PROFFITT"]


def test_mediasum_unify_names_merges_turns(tmp_path):
    path = write_jsonl(tmp_path / "news.jsonl", [
        {"id": "N-1", "utt": ["Q?", "One.", "Two.", "Ok."],
         "speaker": ["HOST", "STEVE PROFFITT", "PROFFITT", "HOST"]},
    ])
    plain = [p.pair_id for p in read_turn_pairs(path)]
    assert plain == ["N-1-0", "N-1-1", "N-1-2"]
    unified = list(read_turn_pairs(path, unify_names=True))
    assert [p.pair_id for p in unified] == ["N-1-0", "N-1-1"]
    assert unified[1].first.text == "One. Two."
    assert unified[1].first.utterances[1].meta == {"speaker_raw": "PROFFITT"}


# -- chat -----------------------------------------------------------------------------


def test_chat_ids_speakers_and_problems(tmp_path):
    path = write_jsonl(tmp_path / "chats.jsonl", [
        {"messages": [{"role": "user", "content": "Hi"},
                      {"role": "assistant", "content": "Hello", "name": "bot"}]},
        {"id": "c9", "source": "x",
         "messages": [{"role": "user", "content": ["part"]}, {"role": "user", "content": "ok"}]},
        {"id": "c10", "messages": "nope"},
    ])
    problems = ProblemCollector()
    first, second = read_chat(path, on_problem=problems)
    assert first.id == "chats:1"
    assert [(u.id, u.speaker, u.text) for u in first.utterances] == [
        ("chats:1-0", "user", "Hi"), ("chats:1-1", "assistant", "Hello")]
    assert first.utterances[1].meta == {"name": "bot"} and first.utterances[1].reply_to == "chats:1-0"
    assert second.meta == {"source": "x"} and [u.id for u in second.utterances] == ["c9-1"]
    assert [(p.line, "content must be a string" in p.reason) for p in problems.problems][0] == (2, True)
    assert problems.problems[1].line == 3 and "messages must be a list" in problems.problems[1].reason


# -- guessing -------------------------------------------------------------------------


def test_guess_format(tmp_path):
    folder = convokit_dir(tmp_path, [utt("a0", "A", "H", "ok")])
    assert guess_format(folder) == "convokit"
    assert guess_format(folder / "utterances.jsonl") == "convokit"
    cases = {
        "m.jsonl": {"id": "x", "utt": [], "speaker": []},
        "c.jsonl": {"messages": []},
        "t.jsonl": {"conversation_id": "x", "speaker": "a", "text": "b"},
        "p.jsonl": {"text1": "a", "text2": "b"},
    }
    for name, record in cases.items():
        write_jsonl(tmp_path / name, ["", record])  # a leading blank line is skipped
    assert [guess_format(tmp_path / n) for n in cases] == ["mediasum", "chat", "turns", "pairs"]
    (tmp_path / "t.csv").write_text("conversation_id,speaker,text\nx,a,b\n")
    (tmp_path / "p.tsv").write_text("Sentence1\tSentence2\tlabel\na\tb\t1\n")
    assert guess_format(tmp_path / "t.csv") == "turns"
    assert guess_format(tmp_path / "p.tsv") == "pairs"


@pytest.mark.parametrize("name,content", [
    ("x.jsonl", '{"foo": 1}\n'),
    ("x.jsonl", "not json\n"),
    ("x.csv", "a,b,c\n1,2,3\n"),
    ("x.json", "[]"),
    ("x.jsonl", ""),
])
def test_guess_format_unclear_names_the_option(tmp_path, name, content):
    (tmp_path / name).write_text(content)
    with pytest.raises(DialogFormatError, match="--format"):
        guess_format(tmp_path / name)


def test_guess_format_empty_directory(tmp_path):
    with pytest.raises(DialogFormatError, match="--format"):
        guess_format(tmp_path)


def test_read_dialogs_dispatch(tmp_path):
    path = write_jsonl(tmp_path / "m.jsonl", [{"id": "x", "utt": ["a"], "speaker": ["H"]}])
    assert [c.id for c in read_dialogs(path)] == ["x"]
    assert [c.id for c in read_dialogs(path, "mediasum")] == ["x"]
    with pytest.raises(DialogFormatError, match="Unknown dialog format"):
        read_dialogs(path, "nope")
    with pytest.raises(DialogFormatError, match="read_turn_pairs"):
        read_dialogs(path, "pairs")
