"""``convert <format> IN OUT [options]``: one sub-command per format, each
with only its own options (what they mean: the module docstring of each
converter in ``spacy_paraphrase/converters/``; the row loop they share:
``converters/common.py``). Here: the sub-commands, writing the DocBin and the
summary."""
import json
from functools import partial
from pathlib import Path
from typing import Annotated, List, Optional

import typer
from wasabi import msg

from ..converters.arpa import convert_arpa
from ..converters.circa import convert_circa
from ..converters.common import Convert, ConversionError, ConversionReport
from ..converters.contextdep import convert_contextdep
from ..converters.multipit import convert_multipit
from ..converters.pairs import convert_pairs
from ..table_reader import PAIR_COLUMNS
from ._util import CommandError, InputPath, Lang, OutputPath, SkipBad, app, fail, run_command

convert_app = typer.Typer(
    name="convert",
    help="Convert a dataset file into a DocBin of reference pair Docs (one sub-command per format).",
    no_args_is_help=True,
    add_completion=False,
)
app.add_typer(convert_app, name="convert")


@convert_app.command("contextdep")
def contextdep_cli(
    input_path: InputPath,
    output_path: OutputPath,
    mode: Annotated[str, typer.Option("--mode", help="majority | all | soft")] = "majority",
    skip_bad: SkipBad = False,
    lang: Lang = "en",
):
    """ContextDeP interview turn pairs with word highlights (TSV, one row per annotation)."""
    convert = partial(convert_contextdep, input_path, mode=mode, skip_bad=skip_bad)
    run_command(run_conversion, convert, input_path, output_path, lang)


def convert_coded_files(inputs: List[Path], output_path: Path, mode: str, lang: str) -> ConversionReport:
    """``convert coded``: every input checked before anything is written
    (CommandError: one line naming the file and pair)."""
    import spacy

    from ..converters.coded import convert_coded
    from ..splits import check_outputs, write_docs
    from ..validation.coding import SheetError

    try:
        check_outputs(inputs, [output_path])
        docs, report = convert_coded(inputs, spacy.blank(lang).vocab, mode=mode)
    except SheetError as err:
        raise CommandError(f"Conversion stopped: {err}") from None
    except ValueError as err:
        raise CommandError(f"Invalid option: {err}") from None
    write_docs(docs, output_path)
    print_report(report, output_path)
    return report


@convert_app.command("coded")
def coded_cli(
    inputs: Annotated[List[Path], typer.Argument(help="Coded files of one sheet (the coding page's exports), then the output .spacy file", metavar="FILES... OUT.spacy")],
    mode: Annotated[str, typer.Option("--mode", help="majority | all | soft (as convert contextdep)")] = "majority",
    lang: Lang = "en",
):
    """The coding page's files (validate sheet): your coders' votes and words, as ContextDeP's."""
    *files, output_path = inputs
    if not files or output_path.suffix != ".spacy":
        fail(f"{output_path}: give one coded file or more, then the output .spacy file (last)")
    run_command(convert_coded_files, files, output_path, mode, lang)


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
    run_command(run_conversion, convert, input_path, output_path, lang)


@convert_app.command("multipit")
def multipit_cli(
    input_path: InputPath,
    output_path: OutputPath,
    skip_bad: SkipBad = False,
    lang: Lang = "en",
):
    """MultiPIT expert sentence pairs (CSV: sentence1, sentence2, label 0/1)."""
    convert = partial(convert_multipit, input_path, skip_bad=skip_bad, lang=lang)
    run_command(run_conversion, convert, input_path, output_path, lang)


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
    run_command(run_conversion, convert, input_path, output_path, lang)


def parse_label_map(value: str) -> dict:
    """The ``--label-map`` JSON object; CommandError on anything else."""
    try:
        label_map = json.loads(value)
    except json.JSONDecodeError as err:
        raise CommandError(f"--label-map is not valid JSON: {err}") from None
    if not isinstance(label_map, dict):
        raise CommandError("--label-map must be a JSON object")
    return label_map


def label_options(label: Optional[str] = None, no_label: bool = False, label_map: Optional[str] = None) -> dict:
    """``convert_pairs``' label options from the command line's; CommandError
    for ``--label`` with ``--no-label`` and a bad ``--label-map``."""
    if no_label and label is not None:
        raise CommandError("--label and --no-label exclude each other")
    options: dict = {}
    if no_label:
        options["label"] = None
    elif label is not None:
        options["label"] = label
    if label_map is not None:
        options["label_map"] = parse_label_map(label_map)
    return options


@convert_app.command("pairs")
def pairs_cli(
    input_path: InputPath,
    output_path: OutputPath,
    text1: Annotated[Optional[str], typer.Option(
        "--text1", help="First text column (name, or 0-based index; default: the first of "
                        f"{', '.join('/'.join(pair) for pair in PAIR_COLUMNS)} present, any case)")] = None,
    text2: Annotated[Optional[str], typer.Option(
        "--text2", help="Second text column (with --text1)")] = None,
    label: Annotated[
        Optional[str], typer.Option("--label", help="Label column (name, or 0-based index; default: label)")
    ] = None,
    no_label: Annotated[bool, typer.Option("--no-label", help="Unlabelled data (empty doc.cats)")] = False,
    id_column: Annotated[
        Optional[str], typer.Option("--id-column", help="Id column (default: id when present, else FILE_STEM:LINE)")
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
    """Any CSV / TSV / JSON Lines file of text pairs (columns found, or chosen by options)."""
    options = run_command(label_options, label, no_label, label_map)
    convert = partial(
        convert_pairs, input_path, text1=text1, text2=text2, id_column=id_column, delimiter=delimiter,
        header=header, quoting=quoting, skip_bad=skip_bad, lang=lang, **options,
    )
    run_command(run_conversion, convert, input_path, output_path, lang)


MAX_SHOWN = 20


def print_report(report: ConversionReport, output_path: Path) -> None:
    """The summary of a conversion: counts, the converter's notes, the first
    skipped rows."""
    msg.good(f"Wrote {report.n_docs} Docs from {report.n_rows} rows to {output_path}")
    print_notes(report)


def print_notes(report: ConversionReport) -> None:
    """The converter's notes and the first skipped rows."""
    for note in report.notes:
        msg.info(note)
    if report.skipped:
        msg.warn(f"Skipped {len(report.skipped)} bad rows:")
        for err in report.skipped[:MAX_SHOWN]:
            print(f"  {err}")
        if len(report.skipped) > MAX_SHOWN:
            print(f"  ... and {len(report.skipped) - MAX_SHOWN} more")


def run_conversion(convert: Convert, input_path: Path, output_path: Path, lang: str) -> ConversionReport:
    """Run ``convert`` on the vocab of a blank ``lang`` pipeline, write its Docs
    to ``output_path`` (a DocBin keeping user data, written through a temporary
    file) and print the summary. A ``ConversionError``, an invalid option, an
    output path that is the input, or no pair converted raises CommandError."""
    import spacy

    from ..splits import check_outputs, write_docs

    vocab = spacy.blank(lang).vocab
    try:
        check_outputs([input_path], [output_path])
        docs, report = convert(vocab)
    except ConversionError as err:
        raise CommandError(f"Conversion stopped: {err}") from None
    except ValueError as err:
        raise CommandError(f"Invalid option: {err}") from None
    if not docs:
        print_notes(report)
        raise CommandError(f"No pair converted from {input_path} ({report.n_rows} rows, {len(report.skipped)} "
                           f"skipped as bad): nothing written to {output_path}")
    write_docs(docs, output_path)
    print_report(report, output_path)
    return report
