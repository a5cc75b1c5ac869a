"""``tune MODEL DATA``: tune a decision setting of a component on pair Docs
(a threshold, the span decoding, the vote-share map) and save it (the
component's ``Tuning``: ``spacy_paraphrase/tuning/``)."""
from pathlib import Path
from typing import Annotated, Optional

import typer
from wasabi import msg

from ..tuning.search import GRID_END, GRID_SIZE, GRID_START
from ..tuning.settings import save_target
from ._util import QUANTILES_HELP, BatchSize, CommandError, GpuId, ModelDir, PairDocs, Pipe, app, choose_tuning, \
    load, process, read_examples, run_command, write_json

SCALE_HELP = ("Highlight rule to use: absolute | turn_max (default: the pipeline's own); "
              "saved with the threshold by --save / --save-to")


def tune(model: str, data: Path, pipe_name: str = "", key: str = "threshold", scores_key: str = "",
         start: float = GRID_START, end: float = GRID_END, n_trials: int = GRID_SIZE,
         n_quantiles: Optional[int] = None, highlight_scale: str = "", save: bool = False,
         save_to: Optional[Path] = None, batch_size: int = 0, gpu_id: int = -1):
    """Tune ``key`` of a component of ``model`` on the pairs in ``data``:
    returns the ``tuning.Found`` (what was chosen, the tables, the report).
    With ``save``, the chosen settings are saved in ``model`` (in place:
    only the component's cfg and ``config.cfg`` are rewritten); with
    ``save_to``, there instead (a new pipeline directory, unless it is
    ``model``). Refused before the pipeline runs when that is not safe."""
    from ..saving import SaveError, check_save_target
    from ..tuning.base import TuningError
    from ..tuning.search import grid
    from ..tuning.settings import save_settings

    target, in_place = save_target(model, save, save_to)
    if target is not None:
        try:
            check_save_target(target, in_place=in_place)
        except SaveError as err:
            raise CommandError(str(err)) from None
    nlp = load(model, gpu_id)
    tuning = choose_tuning(nlp, pipe_name, key=key, highlight_scale=highlight_scale, n_quantiles=n_quantiles)
    examples = process(nlp, read_examples(nlp, data), batch_size)
    values = list(grid(start, end, n_trials))
    try:
        found = tuning.find(examples, key, values, scores_key, n_quantiles)
    except TuningError as err:
        raise CommandError(str(err)) from None
    if target is not None:
        try:
            save_settings(nlp, target, tuning.name, found.settings, in_place=in_place)
        except SaveError as err:
            raise CommandError(str(err)) from None
    return found


@app.command("tune")
def tune_cli(
    model: ModelDir,
    data: PairDocs,
    pipe_name: Pipe = "",
    key: Annotated[str, typer.Option(
        "--key",
        help="threshold | highlight_threshold | decoding (the span decoding settings with the highlight "
             "threshold) | vote_share (fit the vote-share map to the annotator votes); all but threshold: "
             "paraphrase_spans only")] = "threshold",
    scores_key: Annotated[str, typer.Option(
        "--scores-key", "-s",
        help="Score to maximize (default: {pipe}_pair_macro_f for threshold, mean of the two Jaccards for "
             "highlight_threshold; {pipe}_macro_f for a pair_classifier)")] = "",
    start: Annotated[float, typer.Option("--start", help="Lowest value of the swept grid")] = GRID_START,
    end: Annotated[float, typer.Option("--end", help="Highest value of the swept grid")] = GRID_END,
    n_trials: Annotated[int, typer.Option(
        "--n-trials", min=1, help="Number of evenly spaced grid values from --start to --end")] = GRID_SIZE,
    n_quantiles: Annotated[Optional[int], typer.Option(
        "--n-quantiles", min=0, help=QUANTILES_HELP + " (added to the --start/--end grid)")] = None,
    highlight_scale: Annotated[str, typer.Option("--highlight-scale", help=SCALE_HELP)] = "",
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write the sweep to this JSON file")] = None,
    save: Annotated[bool, typer.Option("--save", help="Write the best value into the pipeline at MODEL")] = False,
    save_to: Annotated[Optional[Path], typer.Option(
        "--save-to",
        help="Write the pipeline with the best value to this directory instead (MODEL is left as it is)")] = None,
    batch_size: BatchSize = 0,
    gpu_id: GpuId = -1,
):
    """Tune a threshold, the span decoding or the vote-share map of a component on pair Docs."""
    found = run_command(tune, model, data, pipe_name, key, scores_key, start, end, n_trials, n_quantiles,
                        highlight_scale, save, save_to, batch_size, gpu_id)
    target, _ = save_target(model, save, save_to)
    for header, rows in found.tables:
        msg.table(rows, header=header, divider=True)
    if found.summary:
        msg.good(found.summary)
    write_json(output, found.report)
    if target is not None:
        if len(found.settings) == 1 and key in found.settings:
            msg.good(f"Saved {key} = {found.settings[key]:.3f} in {target}")
        else:
            msg.good(f"Saved {', '.join(found.settings)} in {target}")
