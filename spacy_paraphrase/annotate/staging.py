"""The Ray engine's staging directory: the valid turn pairs written as JSON
Lines shards that Ray Data reads (docs/ray.md).

Each line is one pair's JSON form (``TurnPair.to_json``), all ASCII (other
characters escaped), and Ray Data reads the shards as text (``read_text``:
one string column, ``text``), so Arrow never types the pairs' values (a
``speaker`` that is null in one shard and a string in the next, ``meta`` with
different keys per pair); the actor decodes each line (``line_pair``). ASCII
keeps ``read_text``'s ``str.splitlines`` from cutting a line at a character
such as U+2028 inside a turn. A shard holds whole conversations: it is closed
at the first conversation boundary after ``shard_rows`` lines, so no
conversation (hence no pair) is split across two shards; one conversation
longer than ``shard_rows`` makes one longer shard.
"""
import json
import shutil
import uuid
from pathlib import Path
from typing import IO, Any, List, Optional, Union

from ..dialogs.turns import TurnPair

# The column of ``ray.data.read_text``: one line of a shard.
LINE_COLUMN = "text"
SHARD_PATTERN = "shard-{:06d}.jsonl"


def shard_dir(output: Union[str, Path]) -> Path:
    """A new, unique staging directory next to ``output`` (not created)."""
    output = Path(output)
    return output.parent / f".{output.name}.staging-{uuid.uuid4().hex[:8]}"


def shard_line(pair: TurnPair) -> str:
    """The staging line of one pair (module doc)."""
    return json.dumps(pair.to_json(), ensure_ascii=True) + "\n"


def line_pair(line: str) -> TurnPair:
    """The pair of a staging line (the inverse of ``shard_line``)."""
    return TurnPair.from_json(json.loads(line))


class ShardWriter:
    """Writes pairs into numbered shards (``paths``) under ``directory``
    (module doc)."""

    def __init__(self, directory: Union[str, Path], shard_rows: int = 1000):
        if shard_rows < 1:
            raise ValueError(f"shard_rows must be at least 1, got {shard_rows}")
        self.directory = Path(directory)
        self.shard_rows = shard_rows
        self.paths: List[Path] = []
        self._file: Optional[IO[str]] = None
        self._in_shard = 0
        self._conversation: Any = None

    def __enter__(self) -> "ShardWriter":
        self.directory.mkdir(parents=True, exist_ok=False)
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def write(self, pair: TurnPair) -> None:
        conversation = pair.conversation_id
        full = self._in_shard >= self.shard_rows and conversation != self._conversation
        if self._file is None or full:
            self._next_shard()
        assert self._file is not None
        self._file.write(shard_line(pair))
        self._conversation = conversation
        self._in_shard += 1

    def _next_shard(self) -> None:
        self.close()
        path = self.directory / SHARD_PATTERN.format(len(self.paths))
        self._file = open(path, "w", encoding="utf8")
        self.paths.append(path)
        self._in_shard = 0

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def remove_staging(directory: Union[str, Path]) -> None:
    """Delete a staging directory (nothing when it does not exist)."""
    shutil.rmtree(directory, ignore_errors=True)
