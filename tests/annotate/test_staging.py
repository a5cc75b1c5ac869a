"""The Ray engine's staging shards (annotate/staging.py): whole conversations
per shard, bounded size, pairs read back unchanged."""
import json

import pytest

from spacy_paraphrase.annotate.staging import ShardWriter, line_pair, shard_line, shard_dir
from spacy_paraphrase.dialogs import Turn, TurnPair, Utterance


def _pair(conversation, i, text="some text", meta=None):
    first = Utterance(f"{conversation}-{i}", conversation, None, text)
    second = Utterance(f"{conversation}-{i + 1}", conversation, "b", "x")
    return TurnPair(f"{conversation}-{i}", conversation, Turn.of([first]), Turn.of([second]), meta or {})


def _read(path):
    with open(path, encoding="utf8") as file:
        return [line_pair(line) for line in file]


def _write(tmp_path, sizes, shard_rows):
    pairs = [_pair(f"c{c}", i) for c, n in enumerate(sizes) for i in range(n)]
    with ShardWriter(tmp_path / "staging", shard_rows) as writer:
        for pair in pairs:
            writer.write(pair)
    return pairs, writer


@pytest.mark.parametrize("sizes,shard_rows,expected", [
    ([3, 3, 3, 3], 5, [6, 6]),     # closed at the first boundary after 5 rows
    ([3, 3, 3, 3], 3, [3, 3, 3, 3]),
    ([1, 12, 1, 1], 2, [13, 2]),   # a long conversation makes one long shard
    ([4], 100, [4]),
])
def test_shards_hold_whole_conversations(tmp_path, sizes, shard_rows, expected):
    pairs, writer = _write(tmp_path, sizes, shard_rows)
    shards = [_read(path) for path in writer.paths]
    assert [len(shard) for shard in shards] == expected
    assert [pair for shard in shards for pair in shard] == pairs
    owner = {}
    for index, shard in enumerate(shards):
        for pair in shard:
            assert owner.setdefault(pair.conversation_id, index) == index


def test_lines_are_the_pairs_json_in_ascii_and_survive_any_text(tmp_path):
    text = "caf\u00e9 \u2028line\u2029sep \x1c\x85 \U0001F600 \"quoted\"\n\ttab"
    pair = _pair("c", 0, text, meta={"label": 1, "score": 0.1234567890123, "none": None})
    line = shard_line(pair)
    assert line.endswith("\n") and line.count("\n") == 1 and line.isascii()
    assert json.loads(line) == pair.to_json()  # the pair's JSON form, nothing around it
    assert line.splitlines() == [line[:-1]]  # no str.splitlines boundary inside
    assert line_pair(line) == pair
    with ShardWriter(tmp_path / "s") as writer:
        writer.write(pair)
    assert _read(writer.paths[0]) == [pair]


def test_staging_dir_is_new_and_next_to_output(tmp_path):
    first, second = shard_dir(tmp_path / "out"), shard_dir(tmp_path / "out")
    assert first.parent == tmp_path and first != second and not first.exists()
    with ShardWriter(first):
        pass
    with pytest.raises(FileExistsError):
        with ShardWriter(first):
            pass


def test_shard_rows_must_be_positive(tmp_path):
    with pytest.raises(ValueError, match="shard_rows"):
        ShardWriter(tmp_path / "s", 0)
