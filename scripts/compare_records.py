"""Prove that a code change left annotate's output unchanged: run the
``annotate`` command of two source trees (e.g. a ``git worktree`` of the commit
before and this checkout) with the same pipeline over the same dialog corpus in
each of the five input formats (MediaSum-style, chat, turn table, pair file,
ConvoKit; the small corpora of ``tests/annotate/helpers.py``), and compare the
records and the errors files byte for byte:

    git worktree add --detach ../before COMMIT
    python scripts/compare_records.py MODEL ../before . --work /tmp/records

Exit status 0 when every file is identical, 1 otherwise (the files that differ
are named). A change that adds a key to each turn of a record on purpose is
compared with ``--turn-key-added KEY``: the after tree's records must then be
the before tree's byte for byte once that key is taken out of their turns.
"""
import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
FORMATS = {"mediasum": "dialogs.jsonl", "chat": "chat.jsonl", "turns": "turns.csv", "pairs": "pairs.tsv",
           "convokit": "corpus"}


def write_inputs(directory: Path) -> None:
    sys.path.insert(0, str(ROOT))
    from tests.annotate.helpers import write_chat, write_convokit, write_mediasum, write_pairs_tsv, write_turns_csv

    directory.mkdir(parents=True, exist_ok=True)
    write_mediasum(directory / FORMATS["mediasum"], n_copies=3)
    write_chat(directory / FORMATS["chat"])
    write_turns_csv(directory / FORMATS["turns"])
    write_pairs_tsv(directory / FORMATS["pairs"])
    write_convokit(directory / FORMATS["convokit"])


def annotate(tree: Path, model: str, source: Path, output: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(tree))
    subprocess.run([sys.executable, "-m", "spacy_paraphrase", "annotate", model, str(source), str(output),
                    "--with-probs"], cwd=tree, env=env, check=True, capture_output=True)


def without_turn_keys(data: bytes, keys: Sequence[str]) -> bytes:
    """The record lines of ``data`` with ``keys`` taken out of both turns,
    written again as annotate writes them (every turn must hold the keys)."""
    from spacy_paraphrase.annotate.record_format import dumps

    out = []
    for line in data.splitlines():
        record = json.loads(line)
        for side in ("first", "second"):
            for key in keys:
                del record[side][key]
        out.append(dumps(record))
    return b"".join(out)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="a trained pipeline (directory or package)")
    parser.add_argument("before", type=Path, help="the source tree before the change")
    parser.add_argument("after", type=Path, help="the source tree after the change")
    parser.add_argument("--work", type=Path, required=True, help="an empty directory for inputs and outputs")
    parser.add_argument("--turn-key-added", action="append", default=[],
                        help="a key the after tree adds to each turn of a record on purpose (module doc)")
    args = parser.parse_args(argv)
    write_inputs(args.work / "inputs")
    differ = []
    for fmt, name in FORMATS.items():
        outputs = []
        for label, tree in (("before", args.before), ("after", args.after)):
            output = args.work / label / f"{fmt}.jsonl"
            output.parent.mkdir(parents=True, exist_ok=True)
            annotate(tree.resolve(), args.model, args.work / "inputs" / name, output)
            outputs.append(output)
        for suffix in ("", ".errors.jsonl"):
            a, b = (Path(f"{o}{suffix}") for o in outputs)
            after = b.read_bytes()
            if not suffix and args.turn_key_added:
                after = without_turn_keys(after, args.turn_key_added)
            same = a.read_bytes() == after
            print(f"{fmt:9s} {'records' if not suffix else 'errors '}: {'identical' if same else 'DIFFER'} "
                  f"({len(a.read_bytes().splitlines())} lines)")
            if not same:
                differ.append(str(b))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
