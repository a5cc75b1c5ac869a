"""``visualize INPUT OUTPUT.html``: a self-contained page of the pairs'
highlights (reading: ``visualize/inputs.py``; the page: ``visualize/markup.py``)."""
import math
from pathlib import Path
from typing import Annotated, Optional, Tuple

import typer
from wasabi import msg

from ..pair_doc import SPANS_KEY
from ..annotate.paths import same_file
from ..saving import atomic_write
from ..visualize.inputs import load_views, sort_views
from ..visualize.markup import render_views
from ..visualize.style import DEFAULT_SHADE_SCALE, check_shade_scale
from ._util import CommandError, app, run_command


def visualize(input_path: Path, output_path: Path, limit: Optional[int] = None, sort: Optional[str] = None,
              spans_key: str = SPANS_KEY, threshold: Optional[float] = None,
              shade_scale: str = DEFAULT_SHADE_SCALE) -> Tuple[int, int]:
    """Write the HTML page of the pairs in ``input_path`` (sorted, the first
    ``limit``) to ``output_path``; returns (pairs written, pairs read).
    CommandError for a bad option, an unreadable input, or an output that is
    the input."""
    if limit is not None and limit < 1:
        raise CommandError("--limit must be at least 1")
    if threshold is not None and not math.isfinite(threshold):
        raise CommandError(f"--threshold must be a finite number, got {threshold}")
    if same_file(input_path, output_path):
        raise CommandError(f"OUTPUT {output_path} is the input {input_path}: refusing to write over it")
    try:
        shade_scale = check_shade_scale(shade_scale)
        views = sort_views(load_views(input_path, spans_key=spans_key, threshold=threshold), sort)
    except ValueError as err:
        raise CommandError(str(err)) from None
    n_all = len(views)
    views = views[:limit] if limit is not None else views
    html = render_views(
        views, page=True, title=f"{input_path.name}: paraphrase highlights", shade_scale=shade_scale
    )
    output_path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(output_path, lambda tmp: tmp.write_text(html, encoding="utf-8"))
    return len(views), n_all


@app.command("visualize")
def visualize_cli(
    input_path: Annotated[Path, typer.Argument(help="A .spacy file of pair Docs, an annotate .jsonl output, or an annotate --engine ray output directory")],
    output_path: Annotated[Path, typer.Argument(help="The HTML page to write")],
    limit: Annotated[Optional[int], typer.Option("--limit", help="Keep only the first N pairs (after sorting)")] = None,
    sort: Annotated[Optional[str], typer.Option("--sort", help="margin (borderline first: smallest |pair score − threshold|) | agreement (lowest agreement first; weak today: the fitted vote-share map is nearly flat, so agreement is about 0.5 for every pair and margin finds the borderline pairs) | score (highest first); default: input order")] = None,
    spans_key: Annotated[str, typer.Option("--spans-key", help=".spacy input: the span group to draw")] = SPANS_KEY,
    threshold: Annotated[Optional[float], typer.Option("--threshold", help="Decide 'paraphrase' as pair score >= THRESHOLD for model output, margins measured from it (default: the pipeline's, = pair score − the stored margin; gold Docs keep their gold decision)")] = None,
    shade_scale: Annotated[str, typer.Option("--shade-scale", help="How probabilities are shaded: decision (default: opacity = p on every pair, grey and a third as strong in a pair that is not a paraphrase) | the probability that gets the full shade, opacity = min(1, p / scale): page_max (the page's highest) | pair_max | turn_max | a number in (0, 1]")] = DEFAULT_SHADE_SCALE,
):
    """Write a self-contained HTML page of the pairs' highlights."""
    written, n_all = run_command(visualize, input_path, output_path, limit, sort, spans_key, threshold, shade_scale)
    msg.good(f"Wrote {written} of {n_all} pair(s) to {output_path}")
