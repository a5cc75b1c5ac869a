"""``split INPUT TRAIN DEV --dev N``: hold out a seeded random dev split."""
from pathlib import Path
from typing import Annotated, Tuple

import typer
from wasabi import msg

from ._util import CommandError, DocsLang, DrawSeed, app, read_docs_to_write, run_command


def split(input_path: Path, train_path: Path, dev_path: Path, n_dev: int, seed: int = 0,
          lang: str = "xx") -> Tuple[int, int]:
    """Write the held-out ``n_dev`` Docs and the rest; returns their numbers."""
    from ..splits import split_docs, write_docs

    docs = read_docs_to_write(input_path, [train_path, dev_path], lang)
    try:
        train, dev = split_docs(docs, n_dev, seed)
    except ValueError as err:
        raise CommandError(str(err)) from None
    write_docs(train, train_path)
    write_docs(dev, dev_path)
    return len(train), len(dev)


@app.command("split")
def split_cli(
    input_path: Annotated[Path, typer.Argument(help=".spacy file of pair Docs")],
    train_path: Annotated[Path, typer.Argument(help="Output .spacy file: the rest")],
    dev_path: Annotated[Path, typer.Argument(help="Output .spacy file: the held-out Docs")],
    n_dev: Annotated[int, typer.Option("--dev", help="How many Docs to hold out")],
    seed: DrawSeed = 0,
    lang: DocsLang = "xx",
):
    """Hold out a seeded random dev split (for datasets released without one, e.g. ARPA)."""
    n_train, n_held = run_command(split, input_path, train_path, dev_path, n_dev, seed, lang)
    msg.good(f"{n_train} Docs -> {train_path}, {n_held} Docs -> {dev_path} (seed {seed})")
