"""``cross-tune MODEL DATA``: estimate what tuned settings score on unseen
pairs (k-fold; the component's ``Tuning``: ``spacy_paraphrase/tuning/``)."""
from pathlib import Path
from typing import Annotated, Optional

import typer
from wasabi import msg

from ._util import BatchSize, CommandError, FoldSeed, Folds, GpuId, ModelDir, NQuantiles, PairDocs, Pipe, Repeats, \
    app, check_folds, choose_tuning, load, process, read_examples, run_command, write_json


def cross_tune(model: str, data: Path, pipe_name: str = "", folds: int = 4, repeats: int = 5, seed: int = 0,
               pair_scores_key: str = "", highlight_scores_key: str = "", highlight_scale: str = "",
               n_quantiles: Optional[int] = None, decoding: bool = True, vote_share: bool = True,
               batch_size: int = 0, gpu_id: int = -1, progress: Optional[str] = "cross-tune"):
    """(``Tuning``, estimate): the mean and spread of the held-out folds'
    scores, the settings chosen in each fold and what they were tuned on."""
    from ..tuning.base import TuningError

    nlp = load(model, gpu_id)
    tuning = choose_tuning(nlp, pipe_name, highlight_scale=highlight_scale,
                           highlight_scores_key=highlight_scores_key, n_quantiles=n_quantiles)
    examples = read_examples(nlp, data)
    check_folds(len(examples), folds, repeats)
    examples = process(nlp, examples, batch_size)
    try:
        result = tuning.cross_tune(
            examples, folds=folds, repeats=repeats, seed=seed, pair_scores_key=pair_scores_key,
            highlight_scores_key=highlight_scores_key, n_quantiles=n_quantiles, decoding=decoding,
            vote_share=vote_share, progress=progress,
        )
    except TuningError as err:
        raise CommandError(str(err)) from None
    return tuning, result


@app.command("cross-tune")
def cross_tune_cli(
    model: ModelDir,
    data: PairDocs,
    pipe_name: Pipe = "",
    folds: Folds = 4,
    repeats: Repeats = 5,
    seed: FoldSeed = 0,
    pair_scores_key: Annotated[str, typer.Option(
        "--pair-scores-key",
        help="Score the pair threshold maximizes (default: {pipe}_pair_macro_f; {pipe}_macro_f for a "
             "pair_classifier)")] = "",
    highlight_scores_key: Annotated[str, typer.Option(
        "--highlight-scores-key",
        help="Score the highlight threshold and the span decoding maximize (default: mean of the two Jaccards; "
             "e.g. {pipe}_token_f)")] = "",
    highlight_scale: Annotated[str, typer.Option(
        "--highlight-scale",
        help="Highlight rule to estimate: absolute | turn_max (default: the pipeline's own)")] = "",
    n_quantiles: NQuantiles = None,
    decoding: Annotated[bool, typer.Option(
        "--decoding/--no-decoding",
        help="paraphrase_spans: also tune the span decoding settings on the tuning folds (--no-decoding: "
             "keep the pipeline's)")] = True,
    vote_share: Annotated[bool, typer.Option(
        "--vote-share/--no-vote-share",
        help="paraphrase_spans: also fit the vote-share map on the tuning folds (pairs with annotator votes; "
             "--no-vote-share: keep the pipeline's)")] = True,
    output: Annotated[Optional[Path], typer.Option(
        "--output", "-o", help="Write the estimate to this JSON file")] = None,
    batch_size: BatchSize = 0,
    gpu_id: GpuId = -1,
):
    """Estimate the scores of tuned thresholds on unseen pairs: tune the
    thresholds on k-1 folds, score the held-out fold, average (repeated)."""
    tuning, result = run_command(cross_tune, model, data, pipe_name, folds, repeats, seed, pair_scores_key,
                                 highlight_scores_key, highlight_scale, n_quantiles, decoding, vote_share,
                                 batch_size, gpu_id)
    msg.table(tuning.score_rows(result), header=("score", f"mean of {folds * repeats} held-out folds", "sd"),
              divider=True)
    write_json(output, result, "Saved to")
