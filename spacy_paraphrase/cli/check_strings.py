"""``check-strings MODEL DATA``: the same pairs as word lists and as strings:
what a user sees differ (``paraphrase_spans/strings.py``)."""
from pathlib import Path
from typing import Annotated, Dict, Optional

import typer
from wasabi import msg

from ._util import BatchSize, CommandError, FoldSeed, Folds, GpuId, ModelDir, Repeats, app, check_folds, load, \
    read_examples, run_command, write_json

SHOWN = ("pair_acc", "pair_macro_f", "jaccard_first", "jaccard_second", "token_f")


def check_strings(model: str, data: Path, pipe_name: str = "paraphrase_spans", folds: int = 4, repeats: int = 5,
                  seed: int = 0, batch_size: int = 0, gpu_id: int = -1) -> Dict[str, object]:
    """The string-input checks and both inputs' scores, as trained and
    cross-tuned (``{"checks", "words", "strings"}``)."""
    from ..paraphrase_spans.strings import check_strings as run_checks
    from ..tuning import spans

    nlp = load(model, gpu_id)
    if pipe_name not in nlp.pipe_names or not hasattr(nlp.get_pipe(pipe_name), "readout"):
        raise CommandError(f"No paraphrase_spans component {pipe_name!r} in the pipeline {nlp.pipe_names} (--pipe)")
    pipe = nlp.get_pipe(pipe_name)
    readout = pipe.readout
    examples = read_examples(nlp, data)
    check_folds(len(examples), folds, repeats)
    words, strings, checks = run_checks(nlp, examples, readout, batch_size=batch_size, progress=True)
    result: Dict[str, object] = {"checks": checks}
    for name, examples in (("words", words), ("strings", strings)):
        as_is = spans.score_docs(examples, readout, pipe_name, pipe.scorer)
        crossed = spans.cross_tuned_scores(
            examples, readout, pipe_name, folds=folds, repeats=repeats, seed=seed, scorer=pipe.scorer,
            progress=f"cross-tune ({name})",
        )
        result[name] = {"scores": as_is, "cross_tuned": crossed["scores"], "cross_tuned_spread": crossed["spread"]}
    return result


@app.command("check-strings")
def check_strings_cli(
    model: ModelDir,
    data: Annotated[Path, typer.Argument(
        help=".spacy file of reference pair Docs (word lists, e.g. converted ContextDeP)")],
    pipe_name: Annotated[str, typer.Option(
        "--pipe", "-p", help="The paraphrase_spans component to check")] = "paraphrase_spans",
    folds: Folds = 4,
    repeats: Repeats = 5,
    seed: FoldSeed = 0,
    output: Annotated[Optional[Path], typer.Option(
        "--output", "-o", help="Write the checks and scores to this JSON file")] = None,
    batch_size: BatchSize = 0,
    gpu_id: GpuId = -1,
):
    """Run the pipeline on every pair given as word lists and as strings (the
    words joined by spaces, tokenized by the pipeline): punctuation-only spans
    and turn maxima on punctuation in the string input, word-level agreement of
    the two inputs, and both inputs' scores at the pipeline's thresholds and
    cross-tuned (the string input read word by word)."""
    result = run_command(check_strings, model, data, pipe_name, folds, repeats, seed, batch_size, gpu_id)
    rows = []
    for name in ("words", "strings"):
        as_is, crossed = result[name]["scores"], result[name]["cross_tuned"]
        rows.append([name, "as trained"] + [f"{as_is[f'{pipe_name}_{k}']:.4f}" for k in SHOWN])
        rows.append([name, "cross-tuned"] + [f"{crossed[f'{pipe_name}_{k}']:.4f}" for k in SHOWN])
    msg.table(rows, header=["input", "thresholds"] + list(SHOWN), divider=True)
    msg.table([(k, f"{v:.4f}" if isinstance(v, float) else str(v)) for k, v in result["checks"].items()],
              header=("string input check", "value"), divider=True)
    write_json(output, result, "Saved to")
