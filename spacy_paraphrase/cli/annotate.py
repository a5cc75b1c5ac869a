"""``annotate MODEL INPUT OUTPUT``: find paraphrases in every turn pair of a
dialog corpus (docs/annotate.md; the engines: ``spacy_paraphrase/annotate/``)."""
from pathlib import Path
from typing import Any, Dict, List, Optional

import typer
from wasabi import msg

from ..dialogs import FORMATS, MODES, DialogFormatError
from ..annotate.convokit_output import DEFAULT_PREFIX, ConvoKitOutputError
from ..annotate.resume import ResumeError
from ..annotate.input_pairs import SourceOptions
from ..annotate.stdio import is_stdio, standard_streams
from ._util import app

ENGINES = ("local", "ray")
OUTPUT_FORMATS = ("jsonl", "convokit")


def _pairs(values: List[str], what: str) -> Dict[str, str]:
    """``KEY=VALUE`` options as a dict of strings (a reader option's type is
    checked, and ``true``/``false`` read, against its format: ``source.checked_source``)."""
    out: Dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key:
            msg.fail(f"{what} must look like KEY=VALUE, got {item!r}", exits=1)
        out[key] = value
    return out


def _choice(value: str, choices, what: str) -> None:
    if value not in choices:
        msg.fail(f"Unknown {what} {value!r}; choose one of {', '.join(choices)}.", exits=1)


@app.command("annotate")
def annotate_cli(
    model: str = typer.Argument(..., help="Pipeline: a directory or an installed package name"),
    input_path: Path = typer.Argument(..., help="Dialog corpus (file or ConvoKit directory); -: pairs (JSON Lines or TSV) from standard input", metavar="INPUT"),
    output: Path = typer.Argument(..., help="Records (JSON Lines), or a directory with --output-format convokit; -: to standard output (no checkpoint)"),
    fmt: Optional[str] = typer.Option(None, "--format", "-f", help=f"Input format: {' | '.join(FORMATS)} (default: guessed)"),
    pairing: str = typer.Option("consecutive", "--pairing", help=f"Turn pairing: {' | '.join(MODES)}"),
    role_source: str = typer.Option("speaker", "--role-source", help="Where roles come from: speaker | pattern | meta:FIELD | speaker-meta:FIELD"),
    role_pattern: List[str] = typer.Option([], "--role-pattern", help="ROLE=REGEX for --role-source pattern (repeatable)"),
    first_role: List[str] = typer.Option([], "--first-role", help="Keep pairs whose first turn has this role (repeatable)"),
    second_role: List[str] = typer.Option([], "--second-role", help="Keep pairs whose second turn has this role (repeatable)"),
    unify_names: bool = typer.Option(False, "--unify-names", help="mediasum: ContextDeP's speaker-name normalisation"),
    by_timestamp: bool = typer.Option(False, "--by-timestamp", help="convokit: order utterances by timestamp"),
    reader_option: List[str] = typer.Option([], "--reader-option", help="KEY=VALUE for the format's reader, e.g. text1=question (repeatable)"),
    output_format: str = typer.Option("jsonl", "--output-format", help="jsonl | convokit (ConvoKit input only: a copy of the corpus with the results in its meta)"),
    meta_prefix: str = typer.Option(DEFAULT_PREFIX, "--meta-prefix", help="convokit output: prefix of the new meta keys"),
    errors: Optional[Path] = typer.Option(None, "--errors", help="Skips and malformed records (default: OUTPUT.errors.jsonl)"),
    batch_size: int = typer.Option(64, "--batch-size", "-b", help="Pairs per batch"),
    n_process: int = typer.Option(1, "--n-process", "-n", help="CPU processes (local engine)"),
    gpu_id: int = typer.Option(-1, "--gpu-id", "-g", help="GPU id, -1 for CPU"),
    limit: Optional[int] = typer.Option(None, "--limit", help="Stop after the first N pairs (skipped ones included)"),
    with_probs: bool = typer.Option(False, "--with-probs", help="Also write one probability per word"),
    no_count: bool = typer.Option(False, "--no-count", help="Skip the first pass that counts pairs for the progress bar's ETA"),
    overwrite: bool = typer.Option(False, "--overwrite", help="Start over instead of resuming or refusing"),
    engine: str = typer.Option("local", "--engine", help="local | ray"),
    address: Optional[str] = typer.Option(None, "--address", help="Ray cluster address (engine ray)"),
) -> None:
    """Find paraphrases in every turn pair of a dialog corpus.

    Writes one JSON record per pair (score, decision, spans per utterance;
    word probabilities with --with-probs). An interrupted run resumes when
    started again with the same arguments. Formats and records:
    docs/dialog-formats.md, docs/annotate.md.

    \b
    Example (MediaSum-style interviews, host turns answering guests):
      python -m spacy_paraphrase annotate training/contextdep_minilm_cpu/model-tuned \\
          news_dialogue.jsonl paraphrases.jsonl --format mediasum \\
          --role-source pattern --role-pattern 'host=\\bHOST\\b' \\
          --role-pattern 'guest=.' --first-role guest --second-role host \\
          --with-probs --n-process 2
    """
    _choice(engine, ENGINES, "engine")
    _choice(output_format, OUTPUT_FORMATS, "output format")
    _choice(pairing, MODES, "pairing")
    if fmt is not None:
        _choice(fmt, FORMATS, "format")
    reader_options = _pairs(reader_option, "--reader-option")
    if unify_names:
        reader_options["unify_names"] = True
    if by_timestamp:
        reader_options["by_timestamp"] = True
    if is_stdio(input_path) and fmt is None:
        fmt = "pairs"
    source = SourceOptions(
        fmt=fmt, pairing=pairing, role_source=role_source, role_patterns=_pairs(role_pattern, "--role-pattern"),
        first_roles=list(first_role), second_roles=list(second_role), reader_options=reader_options,
    )
    options = dict(source=source, errors=errors, batch_size=batch_size, gpu_id=gpu_id, limit=limit,
                   with_probs=with_probs, count=not no_count, overwrite=overwrite)
    to_stdout = is_stdio(output)
    with standard_streams(input_path, output) as (input_path, output):
        if to_stdout and (engine != "local" or output_format != "jsonl"):
            msg.fail("Output - (standard output) is JSON Lines records of the local engine only.", exits=1)
        _run(model, input_path, output, engine, output_format, meta_prefix, address, n_process, options)


def _run(model: str, input_path: Path, output: Path, engine: str, output_format: str, meta_prefix: str,
         address: Optional[str], n_process: int, options: Dict[str, Any]) -> None:
    try:
        if engine == "ray":
            if output_format != "jsonl":
                msg.fail("--output-format convokit runs with the local engine only.", exits=1)
            summary = _run_ray(model, input_path, output, address=address, concurrency=n_process, **options)
        elif output_format == "convokit":
            from ..annotate.convokit_output import run_convokit

            summary = run_convokit(model, input_path, output, meta_prefix=meta_prefix, n_process=n_process, **options)
        else:
            from ..annotate.local import run_local

            summary = run_local(model, input_path, output, n_process=n_process, **options)
    except (ResumeError, ConvoKitOutputError, DialogFormatError, FileNotFoundError, ValueError) as err:
        msg.fail(str(err), exits=1)
    except OSError as err:  # the file system: permissions, a full disk, a path of the wrong kind
        msg.fail(os_error_line(err), exits=1)
    if summary.already_done:
        msg.good(f"{output} is complete already (nothing to do; --overwrite starts over)")
    elif summary.written == 0 and summary.role_dropped:
        msg.warn(f"No pair passed the role filter ({summary.role_dropped} left out); check "
                 "--role-source, --role-pattern, --first-role and --second-role. Wrote " + str(output))
    else:
        msg.good("Annotated " + str(output))
    for line in summary.lines():
        msg.text(line)


def os_error_line(err: OSError) -> str:
    """One line for a file-system fault: the path, the cause, and that the same
    command resumes the run once the fault is gone."""
    where = f"{err.filename}: " if err.filename is not None else ""
    cause = err.strerror or str(err)
    return f"{where}{cause}. Fix this and run the same command again: it goes on where it stopped."


def _run_ray(model: str, input_path: Path, output: Path, **options: Any):
    try:
        from ..annotate.ray_engine import run_ray
    except ImportError as err:
        msg.fail(
            f"The Ray engine is not available ({err}); install it with "
            "pip install 'spacy-paraphrase[ray]'.",
            exits=1,
        )
    return run_ray(model, input_path, output, **options)
