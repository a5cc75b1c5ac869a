"""``python -m spacy_paraphrase convert <format> IN OUT [options]``: one
sub-command per format, each with only its own options (what they mean: the
module docstring of each converter). Reading, writing the DocBin, the summary
and the shared options (``--skip-bad``, ``--lang``) are in ``common.py``."""
import json
from functools import partial
from typing import Annotated, Optional

import typer
from wasabi import msg

from .arpa import convert_arpa
from .circa import convert_circa
from .common import InputPath, Lang, OutputPath, SkipBad, run_conversion
from .contextdep import convert_contextdep
from .multipit import convert_multipit
from .pairs import convert_pairs

convert_app = typer.Typer(
    name="convert",
    help="Convert a dataset file into a DocBin of reference pair Docs (one sub-command per format).",
    no_args_is_help=True,
    add_completion=False,
)


@convert_app.command("contextdep")
def contextdep_cli(
    input_path: InputPath,
    output_path: OutputPath,
    mode: Annotated[str, typer.Option("--mode", help="majority | all | soft")] = "majority",
    skip_bad: SkipBad = False,
    lang: Lang = "en",
):
    """ContextDeP interview turn pairs with word highlights (TSV, one row per annotation)."""
    run_conversion(partial(convert_contextdep, input_path, mode=mode, skip_bad=skip_bad), input_path, output_path, lang)


@convert_app.command("circa")
def circa_cli(
    input_path: InputPath,
    output_path: OutputPath,
    labels: Annotated[str, typer.Option("--labels", help="relaxed | strict")] = "relaxed",
    mode: Annotated[str, typer.Option("--mode", help="hard | soft")] = "hard",
    split: Annotated[str, typer.Option("--split", help="all | train | dev | test")] = "all",
    setting: Annotated[str, typer.Option("--setting", help="matched | unmatched")] = "matched",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the split")] = 0,
    held_out: Annotated[
        Optional[str],
        typer.Option("--held-out", help="unmatched: held-out scenario or its index 0-9 (sorted scenarios)"),
    ] = None,
    skip_bad: SkipBad = False,
    lang: Lang = "en",
):
    """Circa indirect answers to yes/no questions (TSV): question -> answer, 8 or 5 labels."""
    convert = partial(
        convert_circa, input_path, labels=labels, mode=mode, split=split, setting=setting,
        seed=seed, held_out=held_out, skip_bad=skip_bad, lang=lang,
    )
    run_conversion(convert, input_path, output_path, lang)


@convert_app.command("multipit")
def multipit_cli(
    input_path: InputPath,
    output_path: OutputPath,
    skip_bad: SkipBad = False,
    lang: Lang = "en",
):
    """MultiPIT expert sentence pairs (CSV: sentence1, sentence2, label 0/1)."""
    run_conversion(partial(convert_multipit, input_path, skip_bad=skip_bad, lang=lang), input_path, output_path, lang)


@convert_app.command("arpa")
def arpa_cli(
    input_path: InputPath,
    output_path: OutputPath,
    keep_near: Annotated[
        bool, typer.Option("--keep-near", help="Keep 0 as NEAR_PARAPHRASE (3 labels)")
    ] = False,
    skip_bad: SkipBad = False,
    lang: Lang = "en",
):
    """ARPA Armenian sentence pairs (TSV: 1 / 0 / -1); tokenize with --lang hy."""
    convert = partial(convert_arpa, input_path, keep_near=keep_near, skip_bad=skip_bad, lang=lang)
    run_conversion(convert, input_path, output_path, lang)


def parse_label_map(value: str) -> dict:
    """The ``--label-map`` JSON object; exits with status 1 on anything else."""
    try:
        label_map = json.loads(value)
    except json.JSONDecodeError as err:
        msg.fail(f"--label-map is not valid JSON: {err}", exits=1)
    if not isinstance(label_map, dict):
        msg.fail("--label-map must be a JSON object", exits=1)
    return label_map


@convert_app.command("pairs")
def pairs_cli(
    input_path: InputPath,
    output_path: OutputPath,
    text1: Annotated[str, typer.Option("--text1", help="First text column (name, or 0-based index)")] = "sentence1",
    text2: Annotated[str, typer.Option("--text2", help="Second text column (name, or 0-based index)")] = "sentence2",
    label: Annotated[
        Optional[str], typer.Option("--label", help="Label column (name, or 0-based index; default: label)")
    ] = None,
    no_label: Annotated[bool, typer.Option("--no-label", help="Unlabelled data (empty doc.cats)")] = False,
    id_column: Annotated[
        Optional[str], typer.Option("--id-column", help="Id column (default: the 1-based row number)")
    ] = None,
    delimiter: Annotated[
        Optional[str],
        typer.Option("--delimiter", help="',' | tab | comma | jsonl (default: from the extension)"),
    ] = None,
    header: Annotated[
        bool, typer.Option("--header/--no-header", help="The first row names the columns")
    ] = True,
    quoting: Annotated[
        str, typer.Option("--quoting", help="minimal | none (bare quotes, e.g. MRPC)")
    ] = "minimal",
    label_map: Annotated[
        Optional[str],
        typer.Option("--label-map", help='JSON object raw value -> label, e.g. \'{"1": "IS_PARAPHRASE"}\''),
    ] = None,
    skip_bad: SkipBad = False,
    lang: Lang = "en",
):
    """Any CSV / TSV / JSON Lines file of text pairs (columns chosen by options)."""
    if no_label and label is not None:
        msg.fail("--label and --no-label exclude each other", exits=1)
    options: dict = {}
    if no_label:
        options["label"] = None
    elif label is not None:
        options["label"] = label
    if label_map is not None:
        options["label_map"] = parse_label_map(label_map)
    convert = partial(
        convert_pairs, input_path, text1=text1, text2=text2, id_column=id_column, delimiter=delimiter,
        header=header, quoting=quoting, skip_bad=skip_bad, lang=lang, **options,
    )
    run_conversion(convert, input_path, output_path, lang)
