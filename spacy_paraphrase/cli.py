"""Command line: ``python -m spacy_paraphrase COMMAND`` (or ``spacy-paraphrase``).

convert FORMAT  dataset file -> .spacy file of reference pair Docs (one sub-command per format)
annotate        score every turn pair of a dialog corpus -> JSON records (docs/annotate.md)
visualize       HTML of pair Docs or annotate records: both turns, shaded words, linked spans
evaluate        score a pipeline on pair Docs (keeps the turns; prints and saves every key)
find-threshold  tune ``threshold`` (or ``highlight_threshold``) of a paraphrase_spans or pair_classifier
cross-tune      estimate tuned-threshold scores on unseen pairs (k-fold)
check-strings   the same pairs as strings and as word lists: what a user sees differ
baseline        write a pipeline with a reference baseline (lexical / always)
split           hold out a seeded random dev split of a .spacy file
sample          write a seeded random subsample of a .spacy file
quantize        copy a trained pipeline as one whose transformer runs in int8 on CPU
backbone        list / install the backbones that can be built offline
"""
from pathlib import Path
from typing import Dict, List, Optional

import numpy
import spacy
import srsly
import typer
from spacy.training import Example
from wasabi import msg

from .pair_classifier import thresholds as pair_thresholds
from .paraphrase_spans import thresholds
from .annotate.cli import annotate_command
from .backbones.cli import backbone_app
from .converters.cli import convert_app
from .corpus import PairCorpus
from .cross_tuning import check_folds
from .quantize import quantize_cli
from .saving import SaveError, check_save_target, save_pipeline_to, save_settings_in_place
from .visualize.cli import visualize_cli
from .paraphrase_spans.readout import check_highlight_scale

app = typer.Typer(name="spacy-paraphrase", no_args_is_help=True, add_completion=False)

BATCH_HELP = "Pairs per batch given to nlp.pipe"
GPU_HELP = "GPU to run on (-1: CPU)"
FOLD_SEED_HELP = "Seed of the fold shuffles (repeat r uses seed + r)"
# spaCy's tokenizer scores (token_acc, token_p, token_r, token_f): always 1.0
# on pair Docs, whose tokens are the reference's; not the component's token F1.
TOKENIZER_KEYS = ("token_acc", "token_p", "token_r", "token_f")


app.add_typer(convert_app, name="convert")
app.add_typer(backbone_app, name="backbone")
app.command("annotate")(annotate_command)
app.command("visualize")(visualize_cli)
app.command("quantize")(quantize_cli)


def _is_pair_classifier(pipe) -> bool:
    from .pair_classifier import PairClassifier  # the component's model imports spacy-transformers

    return isinstance(pipe, PairClassifier)


def _load(model: str, gpu_id: int):
    if gpu_id >= 0:
        spacy.require_gpu(gpu_id)
    return spacy.load(model)


def set_highlight_scale(nlp, pipe_name: Optional[str], scale: str) -> None:
    """Set ``highlight_scale`` (cfg and ``config.cfg``) of a component, or of
    every component that has one (``pipe_name=None``), for this run; ""
    keeps the pipeline's own. Exits with an error on an unknown scale or when
    no component has the setting."""
    if not scale:
        return
    try:
        check_highlight_scale(scale)
    except ValueError as err:
        msg.fail(str(err), exits=1)
    names = [pipe_name] if pipe_name else nlp.pipe_names
    names = [n for n in names if "highlight_scale" in getattr(nlp.get_pipe(n), "cfg", {})]
    if not names:
        which = f"component {pipe_name!r} has" if pipe_name else "component has"
        msg.fail(f"No {which} a highlight_scale setting", exits=1)
    for name in names:
        nlp.get_pipe(name).cfg["highlight_scale"] = scale
        nlp.get_pipe_config(name)["highlight_scale"] = scale


SCALE_HELP = ("Highlight rule to use: absolute | turn_max (default: the pipeline's own); "
              "saved with the threshold by --save / --save-to")


def _examples(nlp, data: Path) -> List[Example]:
    """The pair Examples in ``data``; exits with an error when there are none
    (a score of no pairs would read as 0)."""
    try:
        examples = list(PairCorpus(data)(nlp))
    except ValueError as err:
        msg.fail(f"Cannot read {data}: {err}", exits=1)
    if not examples:
        msg.fail(f"{data} holds no pair Docs: nothing to score", exits=1)
    return examples


def _print_scores(scores: Dict[str, object]) -> None:
    rows = []
    for key, value in scores.items():
        if isinstance(value, float):
            rows.append((key, f"{value:.4f}"))
        elif isinstance(value, int):
            rows.append((key, str(value)))
    msg.table(rows, header=("score", "value"), divider=True)


def evaluate_pipeline(nlp, examples: List[Example], batch_size: int = 8) -> Dict[str, object]:
    """``nlp.evaluate`` plus ``pairs_per_second`` (``speed`` is words per second;
    both time the pipeline only, not the scoring)."""
    scores = nlp.evaluate(examples, batch_size=batch_size)
    scores = {k: v for k, v in scores.items() if v is not None and k not in TOKENIZER_KEYS}
    n_words = sum(len(eg.predicted) for eg in examples)
    if scores.get("speed") and n_words:
        scores["pairs_per_second"] = scores["speed"] * len(examples) / n_words
    scores["n_pairs"] = len(examples)
    return scores


@app.command("evaluate")
def evaluate_cli(
    model: str = typer.Argument(..., help="Pipeline name or directory"),
    data: Path = typer.Argument(..., help=".spacy file (or directory) of reference pair Docs"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write all scores to this JSON file"),
    batch_size: int = typer.Option(8, "--batch-size", "-b", min=1, help=BATCH_HELP),
    gpu_id: int = typer.Option(-1, "--gpu-id", "-g", help=GPU_HELP),
    highlight_scale: str = typer.Option(
        "", "--highlight-scale", help="Highlight rule: absolute | turn_max (default: the pipeline's own)"),
):
    """Evaluate a pipeline on pair Docs, keeping their turns and word indices."""
    nlp = _load(model, gpu_id)
    set_highlight_scale(nlp, None, highlight_scale)
    examples = _examples(nlp, data)
    try:
        scores = evaluate_pipeline(nlp, examples, batch_size)
    except ValueError as err:  # e.g. a Doc that is not a pair, gold the scorer cannot read
        msg.fail(f"Cannot score {data}: {err}", exits=1)
    _print_scores(scores)
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        srsly.write_json(output, scores)
        msg.good(f"Saved scores to {output}")


def _processed(nlp, examples: List[Example], batch_size: int) -> List[Example]:
    try:
        docs = list(nlp.pipe([eg.predicted for eg in examples], batch_size=batch_size))
    except ValueError as err:  # e.g. a Doc that is not a pair
        msg.fail(f"The pipeline cannot process these pairs: {err}", exits=1)
    return [Example(doc, eg.reference) for doc, eg in zip(docs, examples)]


def threshold_sweep(
    nlp,
    examples: List[Example],
    pipe_name: str,
    key: str,
    values: List[float],
    batch_size: int = 8,
) -> List[Dict[str, object]]:
    """Run the pipeline once, then rescore with each value of ``cfg[key]``
    (annotations are rewritten from the stored token probabilities)."""
    pipe = nlp.get_pipe(pipe_name)
    if key not in pipe.cfg:
        raise ValueError(f"Component {pipe_name!r} has no cfg[{key!r}]; it has {list(pipe.cfg)}")
    return thresholds.sweep(
        _processed(nlp, examples, batch_size), dict(pipe.cfg), pipe_name, key, values, pipe.scorer
    )


def save_threshold(nlp, model_dir: Path, pipe_name: str, key: str, value: float, *, in_place: bool) -> None:
    """Set ``cfg[key]`` of a component and save it, keeping the component's
    cfg and ``config.cfg`` in agreement: in place, only those two files are
    rewritten; else the whole pipeline is written to ``model_dir``
    (spacy_paraphrase/saving.py). SaveError when that is not safe."""
    save_settings(nlp, model_dir, pipe_name, {key: float(value)}, in_place=in_place)


def save_settings(nlp, model_dir: Path, pipe_name: str, settings: Dict[str, object], *, in_place: bool) -> None:
    """``save_threshold`` for several cfg keys at once (e.g. the span decoding)."""
    pipe = nlp.get_pipe(pipe_name)
    for key, value in settings.items():
        pipe.cfg[key] = value
        nlp.get_pipe_config(pipe_name)[key] = value
    if in_place:
        save_settings_in_place(nlp, model_dir, pipe_name)
    else:
        save_pipeline_to(nlp, model_dir)


QUANTILES_HELP = ("pair_classifier only: also try this many evenly spaced quantiles of the "
                  f"decided probabilities on the tuning pairs (default {pair_thresholds.N_QUANTILES}; "
                  "0: the grid alone)")
PIPE_HELP = ("Component to tune: a paraphrase_spans or a pair_classifier "
             "(default: 'paraphrase_spans', else the pipeline's first of either)")


def _tuned_pipe(nlp, pipe_name: str):
    """(name, component) to tune: ``pipe_name``, else the component named
    paraphrase_spans, else the first with paraphrase thresholds (a
    paraphrase_spans, a baseline in its place, or a pair_classifier). Exits
    with an error when there is none."""
    def tunable(pipe) -> bool:
        return _is_pair_classifier(pipe) or "highlight_threshold" in getattr(pipe, "cfg", {})

    if pipe_name:
        if pipe_name not in nlp.pipe_names:
            msg.fail(f"No component {pipe_name!r} in the pipeline; it has {nlp.pipe_names}", exits=1)
        if not tunable(nlp.get_pipe(pipe_name)):
            msg.fail(f"Component {pipe_name!r} is neither a paraphrase_spans nor a pair_classifier", exits=1)
        return pipe_name, nlp.get_pipe(pipe_name)
    candidates = [(name, pipe) for name, pipe in nlp.pipeline if tunable(pipe)]
    if not candidates:
        msg.fail(f"No paraphrase_spans or pair_classifier component in the pipeline {nlp.pipe_names}", exits=1)
    name, pipe = next(((n, p) for n, p in candidates if n == "paraphrase_spans"), candidates[0])
    if len(candidates) > 1:
        msg.info(f"Tuning component {name!r} (of {[n for n, _ in candidates]}; --pipe chooses)")
    return name, pipe


def _check_folds(examples: List[Example], folds: int, repeats: int) -> None:
    """Exit with an error, before the pipeline runs, on folds the pairs cannot fill."""
    try:
        check_folds(len(examples), folds, repeats)
    except ValueError as err:
        msg.fail(str(err), exits=1)


def _check_no_quantiles(n_quantiles: Optional[int]) -> None:
    if n_quantiles is not None:
        msg.fail("--n-quantiles is for a pair_classifier; a paraphrase_spans tries the fixed grid", exits=1)


def _classifier_objective(pipe_name: str, scores_key: str):
    if scores_key:
        return scores_key, thresholds.score_key_objective(scores_key)
    return pair_thresholds.default_objective(pipe_name)


SETTINGS_KEYS = ("decoding", "vote_share")


def _fit_settings(nlp, examples: List[Example], pipe_name: str, pipe, key: str, values: List[float],
                  scores_key: str, output: Optional[Path], target: Optional[Path], in_place: bool) -> None:
    """find-threshold --key decoding | vote_share: tune the span decoding
    settings (with the highlight threshold) or fit the vote-share map on the
    processed pairs, show the scores before and after, save and write them."""
    readout = pipe.readout
    try:
        if key == "decoding":
            objectives = {k: thresholds.score_key_objective(scores_key) for k in thresholds.SWEEP_KEYS[1:]} \
                if scores_key else None
            settings = thresholds.tune_decoding(examples, readout, pipe_name, values, objectives, pipe.scorer)
        else:
            share_map = thresholds.fit_share_map(examples, readout)
            if share_map is None:
                msg.fail("Fitting the vote share needs pair Docs with annotator votes (attrs['votes']), "
                         "as `convert contextdep` writes them", exits=1)
            settings = {"vote_share_map": share_map}
    except ValueError as err:
        msg.fail(str(err), exits=1)
    before = thresholds.score_docs(examples, readout, pipe_name, pipe.scorer)
    thresholds.annotate([eg.predicted for eg in examples], readout.replace(**settings))
    after = thresholds.score_docs(examples, readout.replace(**settings), pipe_name, pipe.scorer)
    thresholds.annotate([eg.predicted for eg in examples], readout)
    msg.table([(k, str(v)) for k, v in settings.items()], header=("setting", "value"), divider=True)
    shown = [k for k in SHOWN_SPANS if before.get(f"{pipe_name}_{k}") is not None]
    msg.table([(k, f"{before[f'{pipe_name}_{k}']:.4f}", f"{after[f'{pipe_name}_{k}']:.4f}") for k in shown],
              header=("score", "before", "after"), divider=True)
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        srsly.write_json(output, {"key": key, "best": settings, "before": before, "after": after})
    if target is not None:
        try:
            save_settings(nlp, target, pipe_name, settings, in_place=in_place)
        except SaveError as err:
            msg.fail(str(err), exits=1)
        msg.good(f"Saved {', '.join(settings)} in {target}")


SHOWN_SPANS = ("pair_acc", "pair_macro_f", "pair_f", "jaccard_first", "jaccard_second", "token_f",
               "spans_per_turn", "one_word_spans", "vote_share_pearson", "vote_share_ece", "agreement_spearman")


@app.command("find-threshold")
def find_threshold_cli(
    model: str = typer.Argument(..., help="Pipeline directory"),
    data: Path = typer.Argument(..., help=".spacy file of reference pair Docs"),
    pipe_name: str = typer.Option("", "--pipe", "-p", help=PIPE_HELP),
    key: str = typer.Option(
        "threshold", "--key", "-k",
        help="threshold | highlight_threshold | decoding (the span decoding settings with the highlight "
             "threshold) | vote_share (fit the vote-share map to the annotator votes); all but threshold: "
             "paraphrase_spans only"),
    scores_key: str = typer.Option(
        "", "--scores-key", "-s",
        help="Score to maximize (default: {pipe}_pair_macro_f for threshold, mean of the two Jaccards for "
             "highlight_threshold; {pipe}_macro_f for a pair_classifier)",
    ),
    start: float = typer.Option(0.05, "--start", help="Lowest value of the swept grid"),
    end: float = typer.Option(0.95, "--end", help="Highest value of the swept grid"),
    n_trials: int = typer.Option(19, "--n-trials", "-n", min=1, help="Number of evenly spaced grid values from --start to --end"),
    n_quantiles: Optional[int] = typer.Option(
        None, "--n-quantiles", min=0, help=QUANTILES_HELP + " (added to the --start/--end grid)"),
    highlight_scale: str = typer.Option("", "--highlight-scale", help=SCALE_HELP),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the sweep to this JSON file"),
    save: bool = typer.Option(False, "--save", help="Write the best value into the pipeline at MODEL"),
    save_to: Optional[Path] = typer.Option(None, "--save-to", help="Write the pipeline with the best value to this directory instead (MODEL is left as it is)"),
    batch_size: int = typer.Option(8, "--batch-size", "-b", min=1, help=BATCH_HELP),
    gpu_id: int = typer.Option(-1, "--gpu-id", "-g", help=GPU_HELP),
):
    """Tune a threshold of a paraphrase_spans or pair_classifier component on pair Docs."""
    target = save_to if save_to is not None else Path(model)
    in_place = save_to is None or (Path(model).exists() and save_to.resolve() == Path(model).resolve())
    if save or save_to is not None:
        try:
            check_save_target(target, in_place=in_place)
        except SaveError as err:
            msg.fail(str(err), exits=1)
    nlp = _load(model, gpu_id)
    pipe_name, pipe = _tuned_pipe(nlp, pipe_name)
    values = [round(float(v), 6) for v in numpy.linspace(start, end, n_trials)]
    if _is_pair_classifier(pipe):
        if key != "threshold":
            msg.fail(f"A pair_classifier has one threshold to tune (--key threshold), not {key!r}", exits=1)
        if highlight_scale:
            msg.fail("A pair_classifier has no highlights: --highlight-scale is for paraphrase_spans", exits=1)
        label, objective = _classifier_objective(pipe_name, scores_key)
        examples = _processed(nlp, _examples(nlp, data), batch_size)
        try:
            n_quantiles = pair_thresholds.N_QUANTILES if n_quantiles is None else n_quantiles
            values = list(pair_thresholds.candidate_values(examples, dict(pipe.cfg), values, n_quantiles))
            results = pair_thresholds.sweep(examples, dict(pipe.cfg), pipe_name, values, pipe.scorer)
            objective(results[0])
        except ValueError as err:
            msg.fail(str(err), exits=1)
        shown = [f"{pipe_name}_acc", f"{pipe_name}_macro_f", f"{pipe_name}_pos_p", f"{pipe_name}_pos_r",
                 f"{pipe_name}_pos_f"]
    elif key in SETTINGS_KEYS:
        _check_no_quantiles(n_quantiles)
        set_highlight_scale(nlp, pipe_name, highlight_scale)
        examples = _processed(nlp, _examples(nlp, data), batch_size)
        _fit_settings(nlp, examples, pipe_name, pipe, key, values, scores_key, output,
                      target if (save or save_to is not None) else None, in_place)
        return
    else:
        _check_no_quantiles(n_quantiles)
        if key not in thresholds.KEYS:
            msg.fail(f"--key must be one of {', '.join(thresholds.KEYS + SETTINGS_KEYS)}, not {key!r}", exits=1)
        set_highlight_scale(nlp, pipe_name, highlight_scale)
        examples = _examples(nlp, data)
        results = threshold_sweep(nlp, examples, pipe_name, key, values, batch_size)
        if scores_key:
            label, objective = scores_key, thresholds.score_key_objective(scores_key)
        else:
            label, objective = thresholds.default_objective(pipe_name, key)
        try:
            objective(results[0])
        except ValueError as err:
            msg.fail(str(err), exits=1)
        shown = [f"{pipe_name}_pair_acc", f"{pipe_name}_pair_macro_f", f"{pipe_name}_pair_f",
                 f"{pipe_name}_jaccard_first", f"{pipe_name}_jaccard_second"]
    if all(objective(r) == float("-inf") for r in results):
        msg.fail(f"{label} cannot be computed on these pairs (None at every value): nothing to tune on", exits=1)
    rows = [[f"{r['value']:.3f}", f"{objective(r):.4f}"] + [f"{r.get(k) or 0.0:.4f}" for k in shown] for r in results]
    msg.table(rows, header=[key, label] + [k.replace(pipe_name + "_", "") for k in shown], divider=True)
    best = max(results, key=objective)
    msg.good(f"Best {key} = {best['value']:.3f} ({label} {objective(best):.4f})")
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        srsly.write_json(output, {"key": key, "objective": label, "best": best["value"], "sweep": results})
    if save or save_to is not None:
        try:
            save_threshold(nlp, target, pipe_name, key, best["value"], in_place=in_place)
        except SaveError as err:
            msg.fail(str(err), exits=1)
        msg.good(f"Saved {key} = {best['value']:.3f} in {target}")


@app.command("cross-tune")
def cross_tune_cli(
    model: str = typer.Argument(..., help="Pipeline directory"),
    data: Path = typer.Argument(..., help=".spacy file of reference pair Docs"),
    pipe_name: str = typer.Option("", "--pipe", "-p", help=PIPE_HELP),
    folds: int = typer.Option(4, "--folds", "-k", min=2, help="Number of folds (tune on k-1, score the held-out one)"),
    repeats: int = typer.Option(5, "--repeats", "-r", min=1, help="Number of seeded shuffles into folds"),
    seed: int = typer.Option(0, "--seed", help=FOLD_SEED_HELP),
    pair_scores_key: str = typer.Option(
        "", "--pair-scores-key",
        help="Score the pair threshold maximizes (default: {pipe}_pair_macro_f; {pipe}_macro_f for a pair_classifier)"),
    highlight_scores_key: str = typer.Option(
        "", "--highlight-scores-key",
        help="Score the highlight threshold and the span decoding maximize (default: mean of the two Jaccards; "
             "e.g. {pipe}_token_f)"),
    highlight_scale: str = typer.Option(
        "", "--highlight-scale", help="Highlight rule to estimate: absolute | turn_max (default: the pipeline's own)"),
    n_quantiles: Optional[int] = typer.Option(None, "--n-quantiles", min=0, help=QUANTILES_HELP),
    decoding: bool = typer.Option(
        True, "--decoding/--no-decoding",
        help="paraphrase_spans: also tune the span decoding settings on the tuning folds (--no-decoding: "
             "keep the pipeline's)"),
    vote_share: bool = typer.Option(
        True, "--vote-share/--no-vote-share",
        help="paraphrase_spans: also fit the vote-share map on the tuning folds (pairs with annotator votes; "
             "--no-vote-share: keep the pipeline's)"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the estimate to this JSON file"),
    batch_size: int = typer.Option(8, "--batch-size", "-b", min=1, help=BATCH_HELP),
    gpu_id: int = typer.Option(-1, "--gpu-id", "-g", help=GPU_HELP),
):
    """Estimate the scores of tuned thresholds on unseen pairs: tune the
    thresholds on k-1 folds, score the held-out fold, average (repeated)."""
    nlp = _load(model, gpu_id)
    pipe_name, pipe = _tuned_pipe(nlp, pipe_name)
    examples = _examples(nlp, data)
    _check_folds(examples, folds, repeats)
    if _is_pair_classifier(pipe):
        if highlight_scores_key or highlight_scale:
            msg.fail("A pair_classifier has no highlights: --highlight-scores-key and --highlight-scale "
                     "are for paraphrase_spans", exits=1)
        label, objective = _classifier_objective(pipe_name, pair_scores_key)
        examples = _processed(nlp, examples, batch_size)
        try:
            n_quantiles = pair_thresholds.N_QUANTILES if n_quantiles is None else n_quantiles
            objective(pair_thresholds.score_docs(examples[:1], dict(pipe.cfg), pipe_name, pipe.scorer))
            result = pair_thresholds.cross_tuned_scores(
                examples, dict(pipe.cfg), pipe_name, folds=folds, repeats=repeats, seed=seed, objective=objective,
                scorer=pipe.scorer, n_quantiles=n_quantiles, progress="cross-tune",
            )
        except ValueError as err:
            msg.fail(str(err), exits=1)
        result["objectives"] = {"threshold": label}
        result["n_quantiles"] = n_quantiles
        shown = ["acc", "macro_f", "pos_p", "pos_r", "pos_f"]
    else:
        _check_no_quantiles(n_quantiles)
        set_highlight_scale(nlp, pipe_name, highlight_scale)
        examples = _processed(nlp, examples, batch_size)
        objectives = {}
        for key, scores_key in [("threshold", pair_scores_key)] + [(k, highlight_scores_key) for k in thresholds.SWEEP_KEYS[1:]]:
            if scores_key:
                objectives[key] = thresholds.score_key_objective(scores_key)
        try:
            result = thresholds.cross_tuned_scores(
                examples, dict(pipe.cfg), pipe_name, folds=folds, repeats=repeats, seed=seed, objectives=objectives,
                scorer=pipe.scorer, decoding=decoding, vote_share=vote_share, progress="cross-tune",
            )
        except ValueError as err:
            msg.fail(str(err), exits=1)
        result["decoding"], result["vote_share"] = decoding, vote_share
        result["highlight_scale"] = pipe.cfg.get("highlight_scale", "absolute")
        result["objectives"] = {
            key: (scores_key or thresholds.default_objective(pipe_name, key)[0])
            for key, scores_key in (("threshold", pair_scores_key), ("highlight_threshold", highlight_scores_key))
        }
        shown = list(SHOWN_SPANS)
    rows = [(k, f"{result['scores'][f'{pipe_name}_{k}']:.4f}", f"{result['spread'][f'{pipe_name}_{k}']:.4f}")
            for k in shown if f"{pipe_name}_{k}" in result["scores"]]
    msg.table(rows, header=("score", f"mean of {folds * repeats} held-out folds", "sd"), divider=True)
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        srsly.write_json(output, result)
        msg.good(f"Saved to {output}")


@app.command("check-strings")
def check_strings_cli(
    model: str = typer.Argument(..., help="Pipeline directory"),
    data: Path = typer.Argument(..., help=".spacy file of reference pair Docs (word lists, e.g. converted ContextDeP)"),
    pipe_name: str = typer.Option("paraphrase_spans", "--pipe", "-p", help="The paraphrase_spans component to check"),
    folds: int = typer.Option(4, "--folds", "-k", min=2, help="Number of folds (tune on k-1, score the held-out one)"),
    repeats: int = typer.Option(5, "--repeats", "-r", min=1, help="Number of seeded shuffles into folds"),
    seed: int = typer.Option(0, "--seed", help=FOLD_SEED_HELP),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the checks and scores to this JSON file"),
    batch_size: int = typer.Option(8, "--batch-size", "-b", min=1, help=BATCH_HELP),
    gpu_id: int = typer.Option(-1, "--gpu-id", "-g", help=GPU_HELP),
):
    """Run the pipeline on every pair given as word lists and as strings (the
    words joined by spaces, tokenized by the pipeline): punctuation-only spans
    and turn maxima on punctuation in the string input, word-level agreement of
    the two inputs, and both inputs' scores at the pipeline's thresholds and
    cross-tuned (the string input read word by word)."""
    from .paraphrase_spans.strings import check_strings

    nlp = _load(model, gpu_id)
    if pipe_name not in nlp.pipe_names or not hasattr(nlp.get_pipe(pipe_name), "readout"):
        msg.fail(f"No paraphrase_spans component {pipe_name!r} in the pipeline {nlp.pipe_names} (--pipe)", exits=1)
    pipe = nlp.get_pipe(pipe_name)
    readout = pipe.readout
    examples = _examples(nlp, data)
    _check_folds(examples, folds, repeats)
    words, strings, checks = check_strings(nlp, examples, readout, batch_size=batch_size, progress=True)
    result: Dict[str, object] = {"checks": checks}
    shown = ["pair_acc", "pair_macro_f", "jaccard_first", "jaccard_second", "token_f"]
    rows = []
    for name, examples in (("words", words), ("strings", strings)):
        as_is = thresholds.score_docs(examples, readout, pipe_name, pipe.scorer)
        crossed = thresholds.cross_tuned_scores(
            examples, readout, pipe_name, folds=folds, repeats=repeats, seed=seed, scorer=pipe.scorer,
            progress=f"cross-tune ({name})",
        )
        result[name] = {"scores": as_is, "cross_tuned": crossed["scores"], "cross_tuned_spread": crossed["spread"]}
        rows.append([name, "as trained"] + [f"{as_is[f'{pipe_name}_{k}']:.4f}" for k in shown])
        rows.append([name, "cross-tuned"] + [f"{crossed['scores'][f'{pipe_name}_{k}']:.4f}" for k in shown])
    msg.table(rows, header=["input", "thresholds"] + shown, divider=True)
    msg.table([(k, f"{v:.4f}" if isinstance(v, float) else str(v)) for k, v in checks.items()],
              header=("string input check", "value"), divider=True)
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        srsly.write_json(output, result)
        msg.good(f"Saved to {output}")


@app.command("baseline")
def baseline_cli(
    kind: str = typer.Argument(..., help="lexical | always"),
    output_dir: Path = typer.Argument(..., help="Where to write the pipeline"),
    lang: str = typer.Option("en", "--lang", help="Language of the pipeline (its stop words for the lexical baseline)"),
):
    """Write a pipeline holding a reference baseline, to evaluate like a model."""
    nlp = spacy.blank(lang)
    try:
        nlp.add_pipe("paraphrase_baseline", name="paraphrase_spans", config={"kind": kind})
    except ValueError as err:
        msg.fail(str(err), exits=1)
    output_dir.mkdir(parents=True, exist_ok=True)
    nlp.to_disk(output_dir)
    msg.good(f"Saved the {kind} baseline pipeline to {output_dir}")


def _vocab_for(lang: str):
    return spacy.blank(lang).vocab


@app.command("split")
def split_cli(
    input_path: Path = typer.Argument(..., help=".spacy file of pair Docs"),
    train_path: Path = typer.Argument(..., help="Output .spacy file: the rest"),
    dev_path: Path = typer.Argument(..., help="Output .spacy file: the held-out Docs"),
    n_dev: int = typer.Option(..., "--dev", help="How many Docs to hold out"),
    seed: int = typer.Option(0, "--seed", help="Seed of the random draw"),
    lang: str = typer.Option("xx", "--lang", help="Language of the vocab the Docs are read into"),
):
    """Hold out a seeded random dev split (for datasets released without one, e.g. ARPA)."""
    from .splits import check_outputs, read_docs, split_docs, write_docs

    try:
        check_outputs([input_path], [train_path, dev_path])
        docs = read_docs(input_path, _vocab_for(lang))
        train, dev = split_docs(docs, n_dev, seed)
    except (ValueError, OSError) as err:
        msg.fail(str(err), exits=1)
    write_docs(train, train_path)
    write_docs(dev, dev_path)
    msg.good(f"{len(train)} Docs -> {train_path}, {len(dev)} Docs -> {dev_path} (seed {seed})")


@app.command("sample")
def sample_cli(
    input_path: Path = typer.Argument(..., help=".spacy file of pair Docs"),
    output_path: Path = typer.Argument(..., help="Output .spacy file"),
    n: int = typer.Option(..., "--n", help="How many Docs to keep"),
    seed: int = typer.Option(0, "--seed", help="Seed of the random draw"),
    lang: str = typer.Option("xx", "--lang", help="Language of the vocab the Docs are read into"),
):
    """Write a seeded random subsample (e.g. Circa's CPU training subsample)."""
    from .splits import check_outputs, read_docs, sample_docs, write_docs

    try:
        check_outputs([input_path], [output_path])
        docs = read_docs(input_path, _vocab_for(lang))
        kept = sample_docs(docs, n, seed)
    except (ValueError, OSError) as err:
        msg.fail(str(err), exits=1)
    if len(kept) < n:
        msg.warn(f"Only {len(docs)} Docs in {input_path}: kept all of them")
    write_docs(kept, output_path)
    msg.good(f"{len(kept)} of {len(docs)} Docs -> {output_path} (seed {seed})")


def main() -> None:
    app()
