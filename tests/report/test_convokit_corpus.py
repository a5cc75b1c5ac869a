"""annotate and ``report --dialogs`` read a ConvoKit corpus through the one
reader (``dialogs/convokit.py``), so they agree on its speakers' meta: a
flat ``speakers.json`` (older dumps, hand-made corpora), the older
``users.json`` and files that start with a UTF-8 byte order mark. The report's
groups by a speaker role are the roles annotate's role filter kept."""
import codecs
import csv
import json
from collections import Counter

import pytest
from typer.testing import CliRunner

from spacy_paraphrase.cli import app
from tests.annotate.helpers import read_jsonl

runner = CliRunner()

ROLES = {"G0": "guest", "H0": "host", "G1": "guest", "H1": "host", "X": "producer"}
CONVERSATIONS = {
    "A": [("G0", "I went running with the dogs yesterday."), ("H0", "You were running with dogs?"),
          ("G0", "Yes, all morning with the dogs."), ("H0", "All morning long with them?")],
    "B": [("H1", "Welcome to the show."), ("G1", "Thanks for having me here."),
          ("X", "A short break now."), ("H1", "We are back again.")],
}
TITLES = {"A": "dogs", "B": "show"}
# guest -> host or producer: A's two guest-host pairs and B's guest-producer pair
KEPT = Counter({("guest", "host"): 2, ("guest", "producer"): 1})


def write_corpus(folder, speakers_name="speakers.json", flat=True, bom=False):
    """A ConvoKit corpus: its speakers' entries flat (``{"G0": {"role": ...}}``)
    or ConvoKit 5's (``{"G0": {"meta": {...}, "vectors": []}}``); with ``bom``
    every file starts with a UTF-8 byte order mark."""
    folder.mkdir()
    prefix = codecs.BOM_UTF8 if bom else b""
    lines = [json.dumps({"id": f"{c}{i}", "conversation_id": c, "speaker": speaker,
                         "reply-to": f"{c}{i - 1}" if i else None, "timestamp": 1550000000 + i, "text": text,
                         "meta": {"position": i}})
             for c, utterances in CONVERSATIONS.items() for i, (speaker, text) in enumerate(utterances)]
    (folder / "utterances.jsonl").write_bytes(prefix + "\n".join(lines + [""]).encode("utf-8"))
    speakers = {s: {"role": role} if flat else {"meta": {"role": role}, "vectors": []} for s, role in ROLES.items()}
    (folder / speakers_name).write_bytes(prefix + json.dumps(speakers).encode("utf-8"))
    conversations = {c: {"meta": {"title": title}, "vectors": []} for c, title in TITLES.items()}
    (folder / "conversations.json").write_bytes(prefix + json.dumps(conversations).encode("utf-8"))
    return folder


def _groups(path):
    with open(path, newline="", encoding="utf-8") as f:
        return {row["group"]: int(row["pairs"]) for row in csv.DictReader(f)}


@pytest.mark.parametrize("speakers_name,flat,bom", [
    ("speakers.json", True, False),  # flat speakers.json
    ("users.json", True, False),  # the older users.json (flat, as it was written)
    ("speakers.json", False, True),  # ConvoKit 5 entries, every file with a byte order mark
], ids=["flat-speakers", "users-json", "bom"])
def test_report_groups_by_the_speaker_roles_annotate_kept(model, tmp_path, speakers_name, flat, bom):
    corpus = write_corpus(tmp_path / "corpus", speakers_name, flat, bom)
    out = tmp_path / "out.jsonl"
    result = runner.invoke(app, ["annotate", str(model), str(corpus), str(out), "--format", "convokit",
                                 "--role-source", "speaker-meta:role", "--first-role", "guest",
                                 "--second-role", "host", "--second-role", "producer"])
    assert result.exit_code == 0, result.output
    records = read_jsonl(out)
    kept = Counter((ROLES[r["first"]["speaker"]], ROLES[r["second"]["speaker"]]) for r in records)
    assert kept == KEPT  # annotate read every speaker's role
    result = runner.invoke(app, ["report", str(out), "-o", str(tmp_path / "rep"), "--dialogs", str(corpus),
                                 "--by", "second.speaker.role", "--by", "first.speaker.role",
                                 "--by", "conversation.title", "--by", "second.meta.position", "--n-boot", "200"])
    assert result.exit_code == 0, result.output
    rep = tmp_path / "rep"
    assert _groups(rep / "by_second_speaker_role.csv") == dict(Counter(second for _, second in kept.elements()))
    assert _groups(rep / "by_first_speaker_role.csv") == dict(Counter(first for first, _ in kept.elements()))
    assert _groups(rep / "by_conversation_title.csv") == dict(
        Counter(TITLES[r["conversation_id"]] for r in records))
    opener = {f"{c}{i}": i for c, utterances in CONVERSATIONS.items() for i in range(len(utterances))}
    assert _groups(rep / "by_second_meta_position.csv") == dict(
        Counter(str(opener[r["second"]["utterance_ids"][0]]) for r in records))
