"""Tiny dialog corpora in several formats for the annotate tests, and record checks."""
import csv
import json
from itertools import zip_longest
from pathlib import Path
from typing import Dict, List

# Two interviews: merged turns (A speaks twice in a row), an empty utterance
# inside a turn, odd whitespace, and a whitespace-only last turn (skipped).
MEDIASUM = [
    {"id": "CNN-1", "title": "t", "utt": ["Welcome to the show.", "Thanks for having me.",
                                          "It was my 20th time  in Rome.", "Your twentieth trip to Rome?",
                                          "", "Yes, twenty times.", "   "],
     "speaker": ["HOST", "GUEST", "GUEST", "HOST", "GUEST", "GUEST", "HOST"]},
    {"id": "NPR-2", "title": "u", "utt": ["We won the game.", "Congratulations on the win!",
                                          "Thank you\u00a0so much.", "What about lunch?"],
     "speaker": ["GUEST", "HOST", "GUEST", "HOST"]},
]


def write_jsonl(path: Path, records) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for record in records:
            f.write((record if isinstance(record, str) else json.dumps(record)) + "\n")
    return path


def read_jsonl(path) -> List[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def mediasum_texts(conversations=MEDIASUM) -> Dict[str, str]:
    """utterance id -> text, by MediaSum's id rule ``{id}-{i}``."""
    return {f"{c['id']}-{i}": text for c in conversations for i, text in enumerate(c["utt"])}


def write_mediasum(path: Path, n_copies: int = 1, extra_lines=(), first_lines=()) -> Path:
    records = list(first_lines)
    for k in range(n_copies):
        for conv in MEDIASUM:
            records.append(dict(conv, id=conv["id"] if k == 0 else f"{conv['id']}x{k}"))
    return write_jsonl(path, records + list(extra_lines))


def write_chat(path: Path) -> Path:
    return write_jsonl(path, [
        {"id": "c1", "messages": [{"role": "user", "content": "Is the museum far?"},
                                  {"role": "assistant", "content": "The museum is about 3 km away."},
                                  {"role": "user", "content": "Thanks."}]},
        '{"id": "c2", "messages": "not a list"}',
    ])


def write_turns_csv(path: Path) -> Path:
    rows = [("conversation_id", "speaker", "text", "n"), ("d1", "ann", "Where were you?", "1"),
            ("d2", "bob", "Hello.", "1"), ("d1", "bob", "At home.", "2"), ("d1", "bob", "All day.", "3"),
            ("d1", "ann", "All day at home?", "4"), ("d2", "cid", "Hi Bob.", "2")]
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
        f.write("d2,bob\n")  # too few fields: malformed
    return path


def write_pairs_tsv(path: Path) -> Path:
    path.write_text("sentence1\tsentence2\tlabel\nThe cat sat.\tA cat was sitting.\t1\n"
                    "It rained.\t \t0\nI like tea.\tTea is nice.\t1\n", encoding="utf-8")
    return path


def write_convokit(directory: Path, conversations=MEDIASUM) -> Path:
    """A ConvoKit directory of the MediaSum conversations, with meta
    (utterance, conversation, speaker, corpus), an index and an extra file."""
    directory.mkdir(parents=True)
    per_conversation = []
    for conv in conversations:
        utterances = []
        per_conversation.append(utterances)
        for i, (text, speaker) in enumerate(zip(conv["utt"], conv["speaker"])):
            utterances.append({
                "id": f"{conv['id']}-{i}", "conversation_id": conv["id"], "speaker": speaker,
                "reply-to": f"{conv['id']}-{i - 1}" if i else None, "timestamp": None, "text": text,
                "meta": {"paraphrase_is_host": speaker == "HOST", "position": i}, "vectors": [],
            })
    # conversations interleaved, each in its own order, as ConvoKit files may be
    utterances = [u for group in zip_longest(*per_conversation) for u in group if u is not None]
    write_jsonl(directory / "utterances.jsonl", utterances)
    (directory / "conversations.json").write_text(json.dumps(
        {c["id"]: {"meta": {"title": c["title"]}, "vectors": []} for c in conversations}))
    (directory / "speakers.json").write_text(json.dumps(
        {s: {"meta": {"is_host": s == "HOST"}, "vectors": []} for s in ("HOST", "GUEST")}))
    (directory / "corpus.json").write_text(json.dumps({"name": "tiny"}))
    (directory / "index.json").write_text(json.dumps({
        "utterances-index": {"paraphrase_is_host": ["<class 'bool'>"], "position": ["<class 'int'>"]},
        "speakers-index": {"is_host": ["<class 'bool'>"]},
        "conversations-index": {"title": ["<class 'str'>"]},
        "overall-index": {"name": ["<class 'str'>"]}, "version": 1, "vectors": [],
    }))
    (directory / "README.txt").write_text("extra file\n")
    return directory


def check_record(record: dict, texts: Dict[str, str]) -> None:
    """Span and word offsets index their utterance's own text; one word per
    whitespace word of each turn; turn text = utterance texts joined by a space."""
    for side in ("first", "second"):
        turn = record[side]
        assert turn["text"] == " ".join(texts[u] for u in turn["utterance_ids"])
        if "words" in record:
            words = record["words"][side]
            assert len(words) == len(turn["text"].split())
            assert [w["text"] for w in words] == turn["text"].split()
            for w in words:
                assert texts[w["utterance_id"]][w["start"]:w["end"]] == w["text"]
                assert w["prob"] is None or 0.0 <= w["prob"] <= 1.0
    for span in record["spans"]:
        assert span["utterance_id"] in record[span["side"]]["utterance_ids"]
        assert texts[span["utterance_id"]][span["start"]:span["end"]] == span["text"]
        assert span["text"]


def _rounded(value, digits: int = 4):
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, dict):
        return {k: _rounded(v, digits) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v, digits) for v in value]
    return value


def assert_same_records(got: List[dict], expected: List[dict]) -> None:
    """Same records in the same order; floats compared to 4 decimals (a
    batch's composition changes the last bits of a score)."""
    assert [r["pair_id"] for r in got] == [r["pair_id"] for r in expected]
    assert len({r["pair_id"] for r in got}) == len(got)
    for a, b in zip(got, expected):
        assert _rounded(a) == _rounded(b)


def load_progress(output):
    """The progress in OUTPUT's checkpoint (as annotate wrote it), or None when there is none."""
    from spacy_paraphrase.annotate.resume import Progress, checkpoint_path

    path = checkpoint_path(output)
    if not path.exists():
        return None
    return Progress(**json.loads(path.read_text(encoding="utf-8"))["progress"])


def rename_record_keys(monkeypatch, prefix: str = "renamed_") -> None:
    """Every key of ``RECORD_FIELDS`` renamed to ``prefix`` + key for one
    test, as if the table said so (its fields are frozen: ``key`` is set in
    their ``__dict__``, and put back after the test)."""
    from spacy_paraphrase.annotate.record_format import RECORD_FIELDS

    for f in RECORD_FIELDS:
        monkeypatch.setitem(vars(f), "key", prefix + f.key)


def with_renamed_keys(record: dict, prefix: str = "renamed_") -> dict:
    """The record as it is written once ``rename_record_keys`` renamed its keys."""
    return {prefix + key: value for key, value in record.items()}
