"""Turn building, offsets back to utterances, both pairing modes, roles."""
import json

import pytest

from spacy_paraphrase.dialogs import Turn, Utterance, filter_roles, read_convokit_speakers, read_turn_pairs, role_getter
from spacy_paraphrase.dialogs.pairing import build_turns, pair_conversation, pair_replies
from spacy_paraphrase.dialogs.convokit import read_convokit
from spacy_paraphrase.dialogs.turns import Conversation


def conversation(cid, rows, **meta_by_index):
    """rows: (speaker, text) or (speaker, text, reply_to: index or id)."""
    utterances = []
    for i, row in enumerate(rows):
        reply_to = row[2] if len(row) > 2 else None
        reply_to = f"{cid}-{reply_to}" if isinstance(reply_to, int) else reply_to
        utterances.append(Utterance(f"{cid}-{i}", cid, row[0], row[1], reply_to=reply_to,
                                    meta=meta_by_index.get(f"m{i}", {})))
    return Conversation(cid, utterances)


def test_runs_of_one_speaker_merge_into_turns():
    conv = conversation("c", [("H", "Hi."), ("G", "Well."), ("G", ""), ("G", "So  yes."), ("H", "Ok.")])
    turns = build_turns(conv.utterances)
    assert [(t.speaker, t.utterance_ids) for t in turns] == [
        ("H", ["c-0"]), ("G", ["c-1", "c-2", "c-3"]), ("H", ["c-4"])]
    assert turns[1].text == "Well.  So  yes."  # joined by one space each, texts verbatim
    assert turns[1].offsets == ((0, 5), (6, 6), (7, 15))
    for turn in turns:
        for utterance, (start, end) in zip(turn.utterances, turn.offsets):
            assert turn.text[start:end] == utterance.text


def test_split_span_maps_back_to_each_utterance():
    conv = conversation("c", [("G", "Hello there."), ("G", "How are you?"), ("G", "Bye.")])
    (turn,) = build_turns(conv.utterances)
    by_id = {u.id: u for u in turn.utterances}
    for start in range(len(turn.text) + 1):
        for end in range(start, len(turn.text) + 1):
            pieces = turn.split_span(start, end)
            for piece in pieces:
                own = by_id[piece.utterance_id].text
                assert own[piece.start:piece.end] == piece.text != ""
            # the pieces are the span minus the separators between utterances
            assert "".join(p.text for p in pieces) == "".join(
                ch for i, ch in enumerate(turn.text[start:end], start)
                if any(s <= i < e for s, e in turn.offsets))
    crossing = turn.split_span(6, 16)  # "there. How"
    assert [(p.utterance_id, p.start, p.end, p.text) for p in crossing] == [
        ("c-0", 6, 12, "there."), ("c-1", 0, 3, "How")]
    assert turn.split_span(12, 13) == []  # just the separator
    with pytest.raises(ValueError, match="outside the turn text"):
        turn.split_span(0, len(turn.text) + 1)


def test_consecutive_pairs_and_ids():
    conv = conversation("c", [("H", "q1"), ("G", "a1"), ("G", "a2"), ("H", "q2"), ("G", "a3")])
    pairs = list(pair_conversation(conv))
    assert [(p.pair_id, p.first.text, p.second.text) for p in pairs] == [
        ("c-0", "q1", "a1 a2"), ("c-1", "a1 a2", "q2"), ("c-3", "q2", "a3")]
    assert all(p.conversation_id == "c" for p in pairs)
    assert pairs[1].first.to_json() == {"speaker": "G", "utterance_ids": ["c-1", "c-2"], "text": "a1 a2",
                                        "offsets": [[0, 2], [3, 5]]}
    assert list(pair_conversation(conversation("d", [("H", "alone"), ("H", "still")]))) == []


def test_reply_to_pairs_without_merging():
    conv = conversation("r", [
        ("A", "root"), ("B", "to root", 0), ("A", "to B", 1), ("C", "also to root", 0),
        ("C", "to self", 3), ("B", "to nowhere"), ("D", "unknown parent", "elsewhere-0"),
    ])
    pairs = list(pair_replies(conv))
    assert [p.pair_id for p in pairs] == ["r-0>r-1", "r-1>r-2", "r-0>r-3"]
    assert [(p.first.text, p.second.text) for p in pairs] == [
        ("root", "to root"), ("to root", "to B"), ("root", "also to root")]
    assert all(len(p.first.utterances) == len(p.second.utterances) == 1 for p in pairs)
    with pytest.raises(ValueError, match="Unknown pairing mode"):
        pair_conversation(conv, "nope")


def test_pair_ids_unique_under_both_modes(tmp_path):
    path = tmp_path / "news.jsonl"
    lines = [
        {"id": "N-1", "utt": ["a", "b", "c", "d", "e"], "speaker": ["H", "G", "G", "H", "G"]},
        {"id": "N-2", "utt": ["a", "b", "c"], "speaker": ["H", "G", "H"]},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    consecutive = [p.pair_id for p in read_turn_pairs(path)]
    replies = [p.pair_id for p in read_turn_pairs(path, mode="reply-to")]
    assert consecutive == ["N-1-0", "N-1-1", "N-1-3", "N-2-0", "N-2-1"]
    assert replies == ["N-1-0>N-1-1", "N-1-2>N-1-3", "N-1-3>N-1-4", "N-2-0>N-2-1", "N-2-1>N-2-2"]
    assert len(set(consecutive + replies)) == len(consecutive) + len(replies)
    with pytest.raises(ValueError, match="Unknown pairing mode"):
        read_turn_pairs(path, mode="threads")


def test_pairs_never_cross_conversations_in_a_turn_table(tmp_path):
    path = tmp_path / "t.csv"
    # the same two speakers alternate in both conversations, rows interleaved
    path.write_text("conversation_id,speaker,text\nA,x,a1\nB,y,b1\nA,y,a2\nB,x,b2\nA,x,a3\n")
    pairs = list(read_turn_pairs(path))
    assert [(p.conversation_id, p.first.text, p.second.text) for p in pairs] == [
        ("A", "a1", "a2"), ("A", "a2", "a3"), ("B", "b1", "b2")]


# -- roles -------------------------------------------------------------------------------


def pairs_of(conv):
    return list(pair_conversation(conv))


def test_role_filter_by_speaker_name():
    conv = conversation("c", [("user", "q"), ("assistant", "a"), ("user", "q2"), ("system", "s")])
    role_of = role_getter()
    kept = filter_roles(pairs_of(conv), role_of, first="USER", second=["assistant", "tool"])
    assert [p.pair_id for p in kept] == ["c-0"]
    assert [p.pair_id for p in filter_roles(pairs_of(conv), role_of, second="user")] == ["c-1"]
    assert len(list(filter_roles(pairs_of(conv), role_of))) == 3


def test_role_filter_by_pattern_meta_and_speaker_meta(tmp_path):
    conv = conversation(
        "c", [("RACHEL MARTIN, HOST", "q"), ("DR. X", "a"), ("MARTIN", "q2"), ("DR. X", "a2")],
        m0={"is_host": True}, m1={"is_host": False}, m2={"is_host": True}, m3={},
    )
    by_pattern = role_getter("pattern", patterns={"host": r"\bhost\b|^MARTIN$", "guest": "."})
    kept = filter_roles(pairs_of(conv), by_pattern, first="guest", second="host")
    assert [p.pair_id for p in kept] == ["c-1"]
    by_meta = role_getter("meta:is_host")
    assert [by_meta(u) for u in conv.utterances] == ["true", "false", "true", None]
    assert [p.pair_id for p in filter_roles(pairs_of(conv), by_meta, first="false", second="true")] == ["c-1"]
    assert [p.pair_id for p in filter_roles(pairs_of(conv), by_meta, first="true")] == ["c-0", "c-2"]
    # ConvoKit speakers.json
    folder = tmp_path / "corpus"
    folder.mkdir()
    rows = [("h", "H", "Welcome."), ("g", "G", "Thanks."), ("h2", "H", "So?"), ("g2", "G", "Yes.")]
    (folder / "utterances.jsonl").write_text("".join(
        json.dumps({"id": i, "speaker": s, "conversation_id": "A", "reply-to": None, "text": t}) + "\n"
        for i, s, t in rows))
    speakers = {"H": {"meta": {"role": "host"}}, "G": {"meta": {"role": "guest"}}}
    (folder / "speakers.json").write_text(json.dumps(speakers))
    by_speaker_meta = role_getter("speaker-meta:role", speakers=read_convokit_speakers(folder))
    (conv,) = read_convokit(folder)
    kept = filter_roles(pairs_of(conv), by_speaker_meta, first="guest", second="host")
    assert [(p.first.text, p.second.text) for p in kept] == [("Thanks.", "So?")]


def test_role_getter_errors():
    with pytest.raises(ValueError, match="needs patterns"):
        role_getter("pattern")
    with pytest.raises(ValueError, match="bad regular expression"):
        role_getter("pattern", patterns={"host": "("})
    with pytest.raises(ValueError, match="needs speakers"):
        role_getter("speaker-meta:role")
    with pytest.raises(ValueError, match="Unknown role source"):
        role_getter("meta:")


def test_pairs_without_speakers_have_no_role(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("text1,text2\na,b\n")
    pairs = list(read_turn_pairs(path))
    assert len(pairs) == 1
    assert list(filter_roles(pairs, role_getter(), first="host")) == []
    assert list(filter_roles(pairs, role_getter())) == pairs


def test_turn_of_needs_an_utterance():
    with pytest.raises(ValueError):
        Turn.of([])
