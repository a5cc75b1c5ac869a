"""What the commands share: the typer app, ``load``, the option types, and
``CommandError`` (a problem the user can fix: the command prints its message
and exits with status 1, no traceback). As in ``spacy/cli/_util.py``, this
module imports nothing heavy: each command imports what it needs when it
runs, so ``--help`` costs about what spaCy's does."""
import os
import sys
from pathlib import Path
from typing import Annotated, Callable, Dict, List, NoReturn, Optional, TypeVar

import typer
from wasabi import msg

from ..tuning.classifier import N_QUANTILES

app = typer.Typer(name="spacy-paraphrase", no_args_is_help=True, add_completion=False)

T = TypeVar("T")


class CommandError(Exception):
    """A problem with the command's input or options; its message is the one line shown."""


def fail(message: str) -> NoReturn:
    """Print ``message`` as one line (never wrapped: the terminal wraps it
    to its own width, and a log of it can be grepped) with the failure mark,
    in colour only on a terminal without NO_COLOR / ANSI_COLORS_DISABLED,
    and exit with status 1."""
    mark = "\u2718"
    try:
        mark.encode(sys.stdout.encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        mark = "x"
    line = f"{mark} " + " ".join(str(message).split())
    if sys.stdout.isatty() and not (os.environ.get("NO_COLOR") or os.environ.get("ANSI_COLORS_DISABLED")):
        line = f"\x1b[38;5;1m{line}\x1b[0m"
    print(line, flush=True)
    sys.exit(1)


def run_command(function: Callable[..., T], *args, **kwargs) -> T:
    """Call a command's plain function; a ``CommandError`` exits with its message (``fail``)."""
    try:
        return function(*args, **kwargs)
    except CommandError as err:
        fail(str(err))


def require_report_extra() -> None:
    """CommandError naming what ``report`` / ``validate`` need and lack."""
    from ..report import missing

    need = missing()
    if need:
        raise CommandError(f"This command needs {', '.join(need)}: pip install 'spacy-paraphrase[report]'")


# -- shared option types ------------------------------------------------------
BATCH_HELP = "Pairs per batch given to nlp.pipe (0: 8 on a CPU, 64 on a GPU)"
GPU_HELP = "GPU to run on (-1: CPU)"
FOLD_SEED_HELP = "Seed of the fold shuffles (repeat r uses seed + r)"

Model = Annotated[str, typer.Argument(help="Pipeline: a directory or an installed package name")]
ModelDir = Annotated[str, typer.Argument(help="Pipeline directory")]
PairDocs = Annotated[Path, typer.Argument(help=".spacy file of reference pair Docs")]
BatchSize = Annotated[int, typer.Option("--batch-size", "-b", min=0, help=BATCH_HELP)]
GpuId = Annotated[int, typer.Option("--gpu-id", "-g", help=GPU_HELP)]
Folds = Annotated[int, typer.Option("--folds", "-k", min=2, help="Number of folds (tune on k-1, score the held-out one)")]
Repeats = Annotated[int, typer.Option("--repeats", min=1, help="Number of seeded shuffles into folds")]
FoldSeed = Annotated[int, typer.Option("--seed", help=FOLD_SEED_HELP)]
DrawSeed = Annotated[int, typer.Option("--seed", help="Seed of the random draw")]
DocsLang = Annotated[str, typer.Option("--lang", help="Language of the vocab the Docs are read into")]
# convert <format>
InputPath = Annotated[Path, typer.Argument(help="Input file", metavar="INPUT")]
OutputPath = Annotated[Path, typer.Argument(help="Output .spacy file", metavar="OUTPUT")]
SkipBad = Annotated[bool, typer.Option("--skip-bad", help="Leave bad rows out (counted) instead of stopping")]
Lang = Annotated[str, typer.Option("--lang", help="Language of the blank pipeline used for tokenization")]


# tune, cross-tune
QUANTILES_HELP = ("pair_classifier only: also try this many evenly spaced quantiles of the "
                  f"decided probabilities on the tuning pairs (default {N_QUANTILES}; "
                  "0: the grid alone)")
PIPE_HELP = ("Component to tune: a paraphrase_spans or a pair_classifier "
             "(default: 'paraphrase_spans', else the pipeline's first of either)")
Pipe = Annotated[str, typer.Option("--pipe", "-p", help=PIPE_HELP)]
NQuantiles = Annotated[Optional[int], typer.Option("--n-quantiles", min=0, help=QUANTILES_HELP)]



# -- shared steps ---------------------------------------------------------------
def load(model: str, gpu_id: int = -1):
    """``loading.load_pipeline``; CommandError when the pipeline cannot be loaded."""
    from ..loading import load_pipeline

    try:
        return load_pipeline(model, gpu_id)
    except ValueError as err:
        raise CommandError(str(err)) from None


def read_examples(nlp, data: Path) -> list:
    """The pair Examples in ``data``; CommandError when it cannot be read or
    holds none (a score of no pairs would read as 0)."""
    from ..corpus import PairCorpus

    try:
        examples = list(PairCorpus(data)(nlp))
    except ValueError as err:
        raise CommandError(f"Cannot read {data}: {err}") from None
    if not examples:
        raise CommandError(f"{data} holds no pair Docs: nothing to score")
    return examples


def read_docs_to_write(input_path: Path, outputs: List[Path], lang: str) -> list:
    """The Docs of the ``.spacy`` file ``input_path`` (read into a blank
    ``lang`` vocab) for a command that writes ``outputs``; CommandError when
    an output is the input or given twice, or the file cannot be read."""
    import spacy

    from ..splits import check_outputs, read_docs

    try:
        check_outputs([input_path], outputs)
        return read_docs(input_path, spacy.blank(lang).vocab)
    except (ValueError, OSError) as err:
        raise CommandError(str(err)) from None


def process(nlp, examples: list, batch_size: int) -> list:
    """The Examples with their predicted side run through the pipeline (once)."""
    from spacy.training import Example

    from ..evaluation import default_batch_size

    try:
        docs = list(nlp.pipe([eg.predicted for eg in examples], batch_size=batch_size or default_batch_size()))
    except ValueError as err:  # e.g. a Doc that is not a pair
        raise CommandError(f"The pipeline cannot process these pairs: {err}") from None
    return [Example(doc, eg.reference) for doc, eg in zip(docs, examples)]


def check_folds(n_examples: int, folds: int, repeats: int) -> None:
    """CommandError, before the pipeline runs, on folds the pairs cannot fill."""
    from ..tuning.folds import check_folds as check

    try:
        check(n_examples, folds, repeats)
    except ValueError as err:
        raise CommandError(str(err)) from None


def write_json(output: Optional[Path], payload: Dict[str, object], saved: str = "") -> None:
    """Write ``payload`` to ``output`` (None: nothing), saying so when ``saved`` is given."""
    if output is None:
        return
    import srsly

    from ..saving import atomic_write

    output.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(output, lambda tmp: srsly.write_json(tmp, payload))
    if saved:
        msg.good(f"{saved} {output}")


def print_scores(scores: Dict[str, object]) -> None:
    rows: List[tuple] = []
    for key, value in scores.items():
        if isinstance(value, float):
            rows.append((key, f"{value:.4f}"))
        elif isinstance(value, int):
            rows.append((key, str(value)))
    msg.table(rows, header=("score", "value"), divider=True)


def choose_tuning(nlp, pipe_name: str, **options):
    """``tuning.choice.choose_tuning``; CommandError when the request cannot be carried out."""
    from ..tuning.choice import choose_tuning as choose, tunable_names

    try:
        tuning = choose(nlp, pipe_name, **options)
    except ValueError as err:  # TuningError, an unknown highlight scale
        raise CommandError(str(err)) from None
    names = tunable_names(nlp)
    if not pipe_name and len(names) > 1:
        msg.info(f"Tuning component {tuning.name!r} (of {names}; --pipe chooses)")
    return tuning
