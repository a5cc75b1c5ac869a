"""``report RECORDS... -o DIR``: a corpus report of annotate records (the
work: ``spacy_paraphrase/report/build.py``; docs/report.md)."""
from pathlib import Path
from typing import Annotated, Dict, List, Optional

import typer
from wasabi import msg

from ._util import CommandError, app, require_report_extra, run_command


def report(inputs: List[Path], output_dir: Path, by: Optional[List[str]] = None, by_time: Optional[List[str]] = None,
           validation: Optional[Path] = None, lang: str = "en", n_boot: int = 2000, seed: int = 0,
           dialogs: Optional[Path] = None, role_pattern: Optional[List[str]] = None) -> Dict:
    """Write the report; returns ``{"summary", "files"}`` (CommandError for bad input)."""
    require_report_extra()
    from ..report.build import ReportError, make_report

    if n_boot < 100:
        raise CommandError("--n-boot must be at least 100")
    patterns: Dict[str, str] = {}
    for item in role_pattern or []:
        role, sep, regex = item.partition("=")
        if not sep or not role or not regex:
            raise CommandError(f"--role-pattern must look like ROLE=REGEX, got {item!r}")
        patterns[role] = regex
    try:
        return make_report(inputs, output_dir, by=by or [], by_time=by_time or [], validation=validation,
                           lang=lang, n_boot=n_boot, seed=seed, dialogs=dialogs, role_patterns=patterns)
    except ReportError as err:
        raise CommandError(str(err)) from None


@app.command("report")
def report_cli(
    inputs: Annotated[List[Path], typer.Argument(help="Annotate output(s): .jsonl files, a --engine ray directory, a ConvoKit corpus written by annotate", metavar="RECORDS...")],
    output_dir: Annotated[Path, typer.Option("--output", "-o", help="Directory of the report (index.html, pairs.html, *.csv)")],
    by: Annotated[Optional[List[str]], typer.Option("--by", help="Rate per value of this field (repeatable): second.speaker, meta.KEY, conversation.KEY, ... (docs/report.md)")] = None,
    by_time: Annotated[Optional[List[str]], typer.Option("--by-time", help="Rate over time: FIELD:month or FIELD:year (repeatable)")] = None,
    validation: Annotated[Optional[Path], typer.Option("--validation", help="Scores of 'validate score' (JSON): adds the validation section")] = None,
    lang: Annotated[str, typer.Option("--lang", help="Language of the texts (lemmas of the phrases)")] = "en",
    n_boot: Annotated[int, typer.Option("--n-boot", help="Bootstrap resamples per interval")] = 2000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap")] = 0,
    dialogs: Annotated[Optional[Path], typer.Option("--dialogs", help="The corpus annotate read: its conversation and utterance meta become fields (conversation.KEY, second.meta.KEY, ...), read with the run's format and reader options")] = None,
    role_pattern: Annotated[Optional[List[str]], typer.Option("--role-pattern", help="ROLE=REGEX (repeatable): fields first.role / second.role, the first role whose expression matches the speaker name (case-insensitive)")] = None,
):
    """Write a corpus report of annotate records: rates with conversation-
    bootstrap intervals per group and over time, pair scores, phrases."""
    out = run_command(report, inputs, output_dir, by, by_time, validation, lang, n_boot, seed, dialogs, role_pattern)
    summary = out["summary"]
    rate = summary["paraphrase rate"]
    rate = "not defined (no pair has a score)" if rate is None else f"{rate:.3f}"
    msg.good(f"{summary['pairs']} pairs, paraphrase rate {rate} -> {output_dir / 'index.html'}")
