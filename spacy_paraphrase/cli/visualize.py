"""``visualize INPUT OUTPUT.html``: a self-contained page of the pairs'
highlights (reading: ``visualize/inputs.py``; the page: ``visualize/markup.py``)."""
import math
from pathlib import Path
from typing import Optional

import typer
from wasabi import msg

from ..annotate.paths import same_file
from ..saving import atomic_write
from ..visualize.inputs import load_views, sort_views
from ..visualize.markup import render_views
from ..visualize.style import DEFAULT_SHADE_SCALE, check_shade_scale
from ._util import app


@app.command("visualize")
def visualize_cli(
    input_path: Path = typer.Argument(..., help="A .spacy file of pair Docs, an annotate .jsonl output, or an annotate --engine ray output directory"),
    output_path: Path = typer.Argument(..., help="The HTML page to write"),
    limit: Optional[int] = typer.Option(None, "--limit", "-n", help="Keep only the first N pairs (after sorting)"),
    sort: Optional[str] = typer.Option(None, "--sort", help="margin (borderline first: smallest |pair score - threshold|) | agreement (lowest agreement first; weak today: the fitted vote-share map is nearly flat, so agreement is about 0.5 for every pair and margin finds the borderline pairs) | score (highest first); default: input order"),
    spans_key: str = typer.Option("paraphrase", "--spans-key", help=".spacy input: the span group to draw"),
    threshold: Optional[float] = typer.Option(None, "--threshold", help="Decide 'paraphrase' as pair score >= THRESHOLD for model output, margins measured from it (default: the pipeline's, = pair score - the stored margin; gold Docs keep their gold decision)"),
    shade_scale: str = typer.Option(DEFAULT_SHADE_SCALE, "--shade-scale", help="How probabilities are shaded: decision (default: opacity = p on every pair, grey and a third as strong in a pair that is not a paraphrase) | the probability that gets the full shade, opacity = min(1, p / scale): page_max (the page's highest) | pair_max | turn_max | a number in (0, 1]"),
):
    """Write a self-contained HTML page of the pairs' highlights."""
    if limit is not None and limit < 1:
        msg.fail("--limit must be at least 1", exits=1)
    if threshold is not None and not math.isfinite(threshold):
        msg.fail(f"--threshold must be a finite number, got {threshold}", exits=1)
    if same_file(input_path, output_path):
        msg.fail(f"OUTPUT {output_path} is the input {input_path}: refusing to write over it", exits=1)
    try:
        shade_scale = check_shade_scale(shade_scale)
        views = sort_views(load_views(input_path, spans_key=spans_key, threshold=threshold), sort)
    except ValueError as err:
        msg.fail(str(err), exits=1)
    n_all = len(views)
    views = views[:limit] if limit is not None else views
    html = render_views(
        views, page=True, title=f"{input_path.name}: paraphrase highlights", shade_scale=shade_scale
    )
    output_path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(output_path, lambda tmp: tmp.write_text(html, encoding="utf-8"))
    msg.good(f"Wrote {len(views)} of {n_all} pair(s) to {output_path}")

