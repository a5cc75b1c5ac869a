"""``evaluate MODEL DATA``: score a pipeline on pair Docs."""
from pathlib import Path
from typing import Annotated, Dict, List, Optional

import typer
from wasabi import msg

from ._util import BatchSize, CommandError, GpuId, Model, app, load, print_scores, read_examples, run_command, \
    write_json

HighlightScale = Annotated[str, typer.Option(
    "--highlight-scale", help="Highlight rule: absolute | turn_max (default: the pipeline's own)")]


def evaluate(model: str, data: Path, batch_size: int = 0, gpu_id: int = -1,
             highlight_scale: str = "") -> Dict[str, object]:
    """Every score of the pipeline ``model`` on the pair Docs in ``data``
    (``evaluation.evaluate_pipeline``), with ``highlight_scale`` for this run."""
    from ..evaluation import evaluate_pipeline
    from ..paraphrase_spans.readout import set_highlight_scale

    nlp = load(model, gpu_id)
    try:
        set_highlight_scale(nlp, None, highlight_scale)
    except ValueError as err:
        raise CommandError(str(err)) from None
    examples = read_examples(nlp, data)
    try:
        return evaluate_pipeline(nlp, examples, batch_size)
    except ValueError as err:  # e.g. a Doc that is not a pair, gold the scorer cannot read
        raise CommandError(f"Cannot score {data}: {err}") from None


def paper_lines(scores: Dict[str, object]) -> List[str]:
    """One line per component that has the ContextDeP paper's metrics
    (``{name}_paper_*``, ``paraphrase_spans/scorer.py``; absent when the
    references carry no annotator counts)."""
    lines = []
    for key in scores:
        if not key.endswith("_paper_pair_f"):
            continue
        prefix = key[: -len("pair_f")]

        def value(name: str) -> str:
            v = scores.get(prefix + name)
            return "none" if v is None else f"{v:.4f}"

        lines.append(
            f"{key[: -len('_paper_pair_f')]}: the paper's metrics (as the ContextDeP authors' code "
            f"computes them): pair F1 {value('pair_f')}, P {value('pair_p')}, R {value('pair_r')}; "
            f"Jaccard first {value('jaccard_first')} over {scores.get(prefix + 'jaccard_first_n')} pairs, "
            f"second {value('jaccard_second')} over {scores.get(prefix + 'jaccard_second_n')} pairs"
        )
    return lines


@app.command("evaluate")
def evaluate_cli(
    model: Model,
    data: Annotated[Path, typer.Argument(help=".spacy file (or directory) of reference pair Docs")],
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write all scores to this JSON file")] = None,
    batch_size: BatchSize = 0,
    gpu_id: GpuId = -1,
    highlight_scale: HighlightScale = "",
):
    """Evaluate a pipeline on pair Docs, keeping their turns and word indices."""
    scores = run_command(evaluate, model, data, batch_size, gpu_id, highlight_scale)
    print_scores(scores)
    for line in paper_lines(scores):
        msg.info(line)
    write_json(output, scores, "Saved scores to")
