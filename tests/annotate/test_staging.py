"""The Ray engine's staging shards (annotate/staging.py): whole conversations
per shard, bounded size, rows read back unchanged."""
import json

import pytest

from spacy_paraphrase.annotate.staging import ShardWriter, read_shard_rows, shard_line, shard_dir


def _row(conversation, i, text="some text"):
    return {"pair_id": f"{conversation}-{i}", "conversation_id": conversation,
            "first": {"speaker": None, "utterance_ids": [f"{conversation}-{i}"], "text": text, "offsets": [[0, len(text)]]},
            "second": {"speaker": "b", "utterance_ids": [f"{conversation}-{i + 1}"], "text": "x", "offsets": [[0, 1]]}}


def _write(tmp_path, sizes, shard_rows):
    rows = [_row(f"c{c}", i) for c, n in enumerate(sizes) for i in range(n)]
    with ShardWriter(tmp_path / "staging", shard_rows) as writer:
        writer.write_all(rows)
    return rows, writer


@pytest.mark.parametrize("sizes,shard_rows,expected", [
    ([3, 3, 3, 3], 5, [6, 6]),     # closed at the first boundary after 5 rows
    ([3, 3, 3, 3], 3, [3, 3, 3, 3]),
    ([1, 12, 1, 1], 2, [13, 2]),   # a long conversation makes one long shard
    ([4], 100, [4]),
])
def test_shards_hold_whole_conversations(tmp_path, sizes, shard_rows, expected):
    rows, writer = _write(tmp_path, sizes, shard_rows)
    shards = [list(read_shard_rows(path)) for path in writer.paths]
    assert [len(shard) for shard in shards] == expected
    assert [row for shard in shards for row in shard] == rows
    owner = {}
    for index, shard in enumerate(shards):
        for row in shard:
            assert owner.setdefault(row["conversation_id"], index) == index
    assert writer.rows == len(rows)


def test_lines_are_the_rows_in_ascii_and_survive_any_text(tmp_path):
    text = "caf\u00e9 \u2028line\u2029sep \x1c\x85 \U0001F600 \"quoted\"\n\ttab"
    row = _row("c", 0, text)
    row["meta"] = {"label": 1, "score": 0.1234567890123, "none": None}
    line = shard_line(row)
    assert line.endswith("\n") and line.count("\n") == 1 and line.isascii()
    assert json.loads(line) == row  # the row itself, nothing around it
    assert line.splitlines() == [line[:-1]]  # no str.splitlines boundary inside
    with ShardWriter(tmp_path / "s") as writer:
        writer.write(row)
    assert list(read_shard_rows(writer.paths[0])) == [row]


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
