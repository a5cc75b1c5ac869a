"""``validate plan | sheet | score``: how many pairs to code, a coding sheet of pairs drawn from annotate
records, and the scores of coded sheets (the work:
``spacy_paraphrase/validation/``; docs/report.md, "Validation")."""
import json
from pathlib import Path
from typing import Annotated, Any, Dict, List, Optional

import typer
from wasabi import msg

from ._util import CommandError, DrawSeed, app, require_report_extra, run_command

validate_app = typer.Typer(
    name="validate", no_args_is_help=True, add_completion=False,
    help="Check the model against human coders: draw a coding sheet, score coded sheets.",
)
app.add_typer(validate_app, name="validate")

Records = Annotated[List[Path], typer.Option("--records", "-r", help="The annotate output(s) the sheet was drawn from")]


def _inputs(records: List[Path]) -> List[Path]:
    return [Path(p).resolve() for p in records]


def sheet(records: List[Path], output: Path, n: int = 200, stratify: str = "margin", seed: int = 0,
          design_out: Optional[Path] = None) -> Dict[str, Any]:
    """Draw and write the sheet; returns the design, with ``file`` its path
    (CommandError for bad input)."""
    require_report_extra()
    from ..annotate.paths import same_file
    from ..annotate.record_format import RecordsFileError
    from ..report.records import read_records_and_runs
    from ..validation.sheet import check_design_path, coding_page_path, design_path, draw, sheet_rows, write_sheet

    if output.suffix.lower() != ".csv":
        raise CommandError(f"-o {output}: the coding sheet is a .csv file")
    design_file = design_out if design_out is not None else design_path(output, records)
    for path in records:
        for target in (output, output.with_suffix(".html"), coding_page_path(output), design_file):
            if Path(path).is_file() and same_file(Path(path), target):
                raise CommandError(f"{target} is the input {path}: refusing to write over it")
    try:
        check_design_path(design_file, output)
    except ValueError as err:
        raise CommandError(str(err)) from None
    try:  # never overwrite the design of another sheet (a second sheet drawn from the same records)
        other = json.loads(Path(design_file).read_text(encoding="utf-8")).get("sheet")
    except (OSError, ValueError, AttributeError):
        other = None
    if other and other != str(output.resolve()):
        raise CommandError(f"{design_file} holds the design of another sheet, {other}: give --design-out")
    try:
        data = read_records_and_runs(records, words_of=set())
        sample, design = draw(data.records, n, stratify, seed)
    except (RecordsFileError, ValueError) as err:
        raise CommandError(str(err)) from None
    design.update(model=data.model, threshold=data.threshold, records=[str(p) for p in _inputs(records)],
                  sheet=str(output.resolve()))
    write_sheet(sheet_rows(sample), design, output, design_file)
    return dict(design, file=str(design_file))


def score(sheets: List[Path], records: List[Path], output: Optional[Path] = None, design: Optional[str] = None,
          n_boot: int = 2000, seed: int = 0, tie: str = "half") -> Dict[str, Any]:
    """The scores of coded sheets, written to ``output`` as JSON when given;
    ``design`` the design file or ``none`` (a simple random sample)."""
    require_report_extra()
    from ..annotate.record_format import RecordsFileError
    from ..saving import atomic_write
    from ..validation.coding import SheetError
    from ..validation.scoring import score_sheets

    from ..validation.agreement import TIES

    if tie not in TIES:
        raise CommandError(f"--tie {tie!r}: choose one of {', '.join(TIES)}")
    if not design:
        raise CommandError("give --design DESIGN.json, the file 'validate sheet' wrote (--design-out), or --design "
                           "none when the coded pairs are a simple random sample of the records")
    for path in [*sheets, *records]:
        if output is not None and Path(path).exists() and Path(path).resolve() == output.resolve():
            raise CommandError(f"-o {output} is the input {path}: refusing to write over it")
    try:
        scores = score_sheets(sheets, records, design=None if design.lower() == "none" else Path(design),
                              tie=tie, n_boot=n_boot, seed=seed)
    except (RecordsFileError, SheetError) as err:
        raise CommandError(str(err)) from None
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(output, lambda tmp: tmp.write_text(json.dumps(scores, indent=1), encoding="utf-8"))
    return scores


def plan(records: List[Path], half_width: float, figure: str = "rate", stratify: str = "margin",
         error_rate: Optional[float] = None, deff: float = 1.0) -> Dict[str, Any]:
    """How many pairs to code (validation/plan.py); CommandError for bad input."""
    require_report_extra()
    from ..annotate.record_format import RecordsFileError
    from ..report.records import read_records_and_runs
    from ..validation.plan import plan as make_plan

    try:
        data = read_records_and_runs(records, words_of=set())
        return make_plan(data.records, half_width, figure=figure, stratify=stratify, error_rate=error_rate,
                         deff=deff)
    except (RecordsFileError, ValueError) as err:
        raise CommandError(str(err)) from None


@validate_app.command("plan")
def plan_cli(
    records: Annotated[List[Path], typer.Argument(help="Annotate output(s) the sheet will be drawn from", metavar="RECORDS...")],
    half_width: Annotated[float, typer.Option("--half-width", help="Target half-width of the 95% interval (e.g. 0.05: +-5 points)")],
    figure: Annotated[str, typer.Option("--for", help="rate | precision | recall")] = "rate",
    stratify: Annotated[str, typer.Option("--stratify", help="The sheet's strata: margin | decision | none")] = "margin",
    error_rate: Annotated[Optional[float], typer.Option("--error-rate", help="Prior: the model's decision is wrong for this share of pairs (default: the scores read as probabilities)")] = None,
    deff: Annotated[float, typer.Option("--deff", help="Design effect of conversations that differ (1: pairs as if independent)")] = 1.0,
):
    """How many pairs to code for a target interval of the rate, precision
    or recall (from the model's scores and a prior for its errors)."""
    out = run_command(plan, records, half_width, figure, stratify, error_rate, deff)
    for row in out["strata"]:
        print(f"{row['stratum']}: {row['pairs']} pairs, prior paraphrase share {row['prior']:.3f}, code {row['sample']}")
    widths = ", ".join(f"{k} +-{v:.3f}" if v is not None else f"{k} not defined" for k, v in out["half_widths"].items())
    if out["reachable"]:
        msg.good(f"Code {out['n']} pairs for {out['figure']} +-{out['half_width']:g} (prior: {out['prior']}, "
                 f"deff {out['deff']:g}); predicted 95% half-widths: {widths}. Then: validate sheet "
                 f"RECORDS -o coding/sheet.csv --n {out['n']} --stratify {out['stratify']}")
    else:
        msg.warn(f"Even coding all {out['n']} pairs gives {out['figure']} +-{out['half_widths'][out['figure']] or 0:.3f}, "
                 f"not +-{out['half_width']:g} (prior: {out['prior']}): widen the target or add pairs")


@validate_app.command("sheet")
def sheet_cli(
    records: Annotated[List[Path], typer.Argument(help="Annotate output(s) to draw from", metavar="RECORDS...")],
    output: Annotated[Path, typer.Option("--output", "-o", help="The coding sheet (.csv) for the coders; SHEET.html goes beside it")],
    n: Annotated[int, typer.Option("--n", help="Pairs to draw")] = 200,
    stratify: Annotated[str, typer.Option("--stratify", help="margin (decision x distance from the threshold) | decision | none")] = "margin",
    seed: DrawSeed = 0,
    design_out: Annotated[Optional[Path], typer.Option("--design-out", help="The sample design, for 'validate score --design' (default: SHEET.design.json beside the first records input; never in the sheet's folder)")] = None,
):
    """Draw pairs for human coding and write a coding sheet (the model's
    answer hidden), an HTML view of it and, elsewhere, the sample design."""
    design = run_command(sheet, records, output, n, stratify, seed, design_out)
    page = output.with_suffix(".coding.html")
    msg.good(f"{design['n']} pairs from {len(design['strata'])} strata -> {output}, {output.with_suffix('.html')} and "
             f"the coding page {page} (for the coders: open it in a browser, code, export); design -> {design['file']} (for validate score --design; keep it from the coders)")


@validate_app.command("score")
def score_cli(
    sheets: Annotated[List[Path], typer.Argument(help="Coded sheets (.csv) or the coding page's coded files (.json), one per coder", metavar="SHEET...")],
    records: Records,
    design: Annotated[str, typer.Option("--design", help="The design file of 'validate sheet' (--design-out), or none: the coded pairs are a simple random sample of the records")] = "",
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write the scores as JSON (for report --validation)")] = None,
    tie: Annotated[str, typer.Option("--tie", help="A pair whose coders' votes tie: half (counts 0.5) | exclude | paraphrase | not-paraphrase")] = "half",
    n_boot: Annotated[int, typer.Option("--n-boot", help="Bootstrap resamples per interval")] = 2000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap")] = 0,
):
    """Agreement among coders and with the model, the model's precision /
    recall / F1 and the corpus' paraphrase rate, with 95% intervals; from
    the coding page's files also the word-level figures."""
    from ..report.validation_section import estimator_line, rows, ties_line

    scores = run_command(score, sheets, records, output, design, n_boot, seed, tie)
    uncoded = scores["design"].get("strata_without_coded_pairs")
    if uncoded:
        msg.warn(f"No coded pair in the strata {'; '.join(uncoded)} (tied pairs left out by --tie exclude count as "
                 "not coded): the estimates leave their pairs out (code some of them)")
    for name, value, ci in rows(scores):
        print(f"{name}: {value}" + (f"  [{ci}]" if ci else ""))
    print(ties_line(scores))
    print(estimator_line(scores))
    if output is not None:
        msg.good(f"Scores -> {output}")
