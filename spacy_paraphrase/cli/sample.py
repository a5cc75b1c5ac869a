"""``sample INPUT OUTPUT --n N``: a seeded random subsample."""
from pathlib import Path
from typing import Annotated, Tuple

import typer
from wasabi import msg

from ._util import CommandError, DocsLang, DrawSeed, app, read_docs_to_write, run_command


def sample(input_path: Path, output_path: Path, n: int, seed: int = 0, lang: str = "xx") -> Tuple[int, int]:
    """Write ``n`` Docs drawn from ``input_path``; returns (kept, all)."""
    from ..splits import sample_docs, write_docs

    docs = read_docs_to_write(input_path, [output_path], lang)
    try:
        kept = sample_docs(docs, n, seed)
    except ValueError as err:
        raise CommandError(str(err)) from None
    if len(kept) < n:
        msg.warn(f"Only {len(docs)} Docs in {input_path}: kept all of them")
    write_docs(kept, output_path)
    return len(kept), len(docs)


@app.command("sample")
def sample_cli(
    input_path: Annotated[Path, typer.Argument(help=".spacy file of pair Docs")],
    output_path: Annotated[Path, typer.Argument(help="Output .spacy file")],
    n: Annotated[int, typer.Option("--n", help="How many Docs to keep")],
    seed: DrawSeed = 0,
    lang: DocsLang = "xx",
):
    """Write a seeded random subsample (e.g. Circa's CPU training subsample)."""
    n_kept, n_all = run_command(sample, input_path, output_path, n, seed, lang)
    msg.good(f"{n_kept} of {n_all} Docs -> {output_path} (seed {seed})")
