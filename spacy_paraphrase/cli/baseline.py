"""``baseline KIND OUTPUT_DIR``: a pipeline holding a reference baseline."""
from pathlib import Path
from typing import Annotated

import typer
from wasabi import msg

from ._util import CommandError, app, run_command


def baseline(kind: str, output_dir: Path, lang: str = "en") -> None:
    """Write a blank ``lang`` pipeline whose ``paraphrase_spans`` is the
    ``paraphrase_baseline`` of ``kind`` (lexical | always)."""
    import spacy

    nlp = spacy.blank(lang)
    try:
        nlp.add_pipe("paraphrase_baseline", name="paraphrase_spans", config={"kind": kind})
    except ValueError as err:
        raise CommandError(str(err)) from None
    from ..saving import SaveError, save_pipeline_to

    try:
        save_pipeline_to(nlp, output_dir)
    except SaveError as err:
        raise CommandError(str(err)) from None


@app.command("baseline")
def baseline_cli(
    kind: Annotated[str, typer.Argument(help="lexical | always")],
    output_dir: Annotated[Path, typer.Argument(help="Where to write the pipeline")],
    lang: Annotated[str, typer.Option(
        "--lang", help="Language of the pipeline (its stop words for the lexical baseline)")] = "en",
):
    """Write a pipeline holding a reference baseline, to evaluate like a model."""
    run_command(baseline, kind, output_dir, lang)
    msg.good(f"Saved the {kind} baseline pipeline to {output_dir}")
