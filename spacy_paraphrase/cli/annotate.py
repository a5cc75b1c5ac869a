"""``annotate MODEL INPUT OUTPUT``: find paraphrases in every turn pair of a
dialog corpus (docs/annotate.md; the engines: ``spacy_paraphrase/annotate/``).
``annotate`` is the plain function (files); the command adds ``-`` for the
standard streams (``annotate/stdio.py``) and prints the run's summary."""
from pathlib import Path
from typing import Annotated, Any, Dict, List, Optional, Sequence

import typer
from wasabi import msg

from ..dialogs import DialogFormatError, FORMATS, SourceOptions
from ..dialogs.pairing import MODES
from ..annotate.convokit_output import DEFAULT_PREFIX, ConvoKitOutputError
from ..annotate.heap import DEFAULT_HEAP_POLICY, HEAP_POLICIES
from ..annotate.resume import ResumeError
from ..annotate.stdio import is_stdio, standard_streams
from ._util import CommandError, GpuId, Model, app, run_command

ENGINES = ("local", "ray")
OUTPUT_FORMATS = ("jsonl", "convokit")


def _key_value_options(values: Sequence[str], what: str) -> Dict[str, str]:
    """``KEY=VALUE`` options as a dict of strings (a reader option's type is
    checked, and ``true``/``false`` read, against its format when the corpus
    is opened: ``dialogs.DialogCorpus``)."""
    out: Dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise CommandError(f"{what} must look like KEY=VALUE, got {item!r}")
        out[key] = value
    return out


def _choice(value: str, choices, what: str) -> None:
    if value not in choices:
        raise CommandError(f"Unknown {what} {value!r}; choose one of {', '.join(choices)}.")


def source_options(fmt: Optional[str] = None, pairing: str = "consecutive", role_source: str = "speaker",
                   role_patterns: Sequence[str] = (), first_roles: Sequence[str] = (),
                   second_roles: Sequence[str] = (), reader_options: Sequence[str] = (),
                   unify_names: bool = False, by_timestamp: bool = False) -> SourceOptions:
    """How the corpus is read, from the command line's options (``KEY=VALUE``
    strings for ``role_patterns`` and ``reader_options``); CommandError for
    a malformed ``KEY=VALUE`` and an unknown pairing mode (``SourceOptions``;
    the format and the reader options are checked when the corpus is opened:
    ``dialogs.DialogCorpus``)."""
    readers: Dict[str, Any] = dict(_key_value_options(reader_options, "--reader-option"))
    if unify_names:
        readers["unify_names"] = True
    if by_timestamp:
        readers["by_timestamp"] = True
    try:
        return SourceOptions(
            fmt=fmt, pairing=pairing, role_source=role_source,
            role_patterns=_key_value_options(role_patterns, "--role-pattern"),
            first_roles=list(first_roles), second_roles=list(second_roles), reader_options=readers,
        )
    except ValueError as err:
        raise CommandError(str(err)) from None


def annotate(model: str, input_path: Path, output: Path, source: Optional[SourceOptions] = None, *,
             engine: str = "local", output_format: str = "jsonl", meta_prefix: str = DEFAULT_PREFIX,
             address: Optional[str] = None, n_process: int = 1, errors: Optional[Path] = None,
             batch_size: int = 64, gpu_id: int = -1, limit: Optional[int] = None, with_probs: bool = False,
             count: bool = True, overwrite: bool = False, heap: str = DEFAULT_HEAP_POLICY):
    """Annotate every turn pair of the corpus ``input_path`` (read as
    ``source`` says) with the pipeline ``model`` into ``output``: JSON Lines
    records, or with ``output_format="convokit"`` a copy of a ConvoKit corpus
    with the results in its meta; ``engine="ray"`` runs on a Ray cluster
    (``address``; ``n_process`` actors). Returns the run's summary
    (``annotate.local.Summary``). A problem the user can fix (an option, a
    run that cannot resume, a corpus that cannot be read, a file-system
    fault) raises ``CommandError``."""
    _choice(engine, ENGINES, "engine")
    _choice(output_format, OUTPUT_FORMATS, "output format")
    _choice(heap, HEAP_POLICIES, "heap policy")
    options = dict(source=source, errors=errors, batch_size=batch_size, gpu_id=gpu_id, limit=limit,
                   with_probs=with_probs, count=count, overwrite=overwrite, heap=heap)
    try:
        if engine == "ray":
            if output_format != "jsonl":
                raise CommandError("--output-format convokit runs with the local engine only.")
            return _run_ray(model, input_path, output, address=address, concurrency=n_process, **options)
        if output_format == "convokit":
            from ..annotate.convokit_output import run_convokit

            return run_convokit(model, input_path, output, meta_prefix=meta_prefix, n_process=n_process, **options)
        from ..annotate.local import run_local

        return run_local(model, input_path, output, n_process=n_process, **options)
    except (ResumeError, ConvoKitOutputError, DialogFormatError, FileNotFoundError, ValueError) as err:
        raise CommandError(str(err)) from None
    except OSError as err:  # the file system: permissions, a full disk, a path of the wrong kind
        raise CommandError(os_error_line(err)) from None


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
        raise CommandError(f"The Ray engine is not available ({err}); install it with "
                           "pip install 'spacy-paraphrase[ray]'.") from None
    return run_ray(model, input_path, output, **options)


def _check_stdout(engine: str, output_format: str) -> None:
    if engine != "local" or output_format != "jsonl":
        raise CommandError("Output - (standard output) is JSON Lines records of the local engine only.")


def print_summary(summary, output: Path) -> None:
    """What the run did: done already, nothing passed the role filter, or
    written; then the summary's counts."""
    if summary.already_done:
        msg.good(f"{output} is complete already (nothing to do; --overwrite starts over)")
    elif summary.written == 0 and summary.role_dropped:
        msg.warn(f"No pair passed the role filter ({summary.role_dropped} left out); check "
                 "--role-source, --role-pattern, --first-role and --second-role. Wrote " + str(output))
    else:
        msg.good("Annotated " + str(output))
    for line in summary.lines():
        msg.text(line)


@app.command("annotate")
def annotate_cli(
    model: Model,
    input_path: Annotated[Path, typer.Argument(help="Dialog corpus (file or ConvoKit directory); -: pairs (JSON Lines or TSV) from standard input", metavar="INPUT")],
    output: Annotated[Path, typer.Argument(help="Records (JSON Lines), or a directory with --output-format convokit; -: to standard output (no checkpoint)")],
    fmt: Annotated[Optional[str], typer.Option("--format", "-f", help=f"Input format: {' | '.join(FORMATS)} (default: guessed)")] = None,
    pairing: Annotated[str, typer.Option("--pairing", help=f"Turn pairing: {' | '.join(MODES)}")] = "consecutive",
    role_source: Annotated[str, typer.Option("--role-source", help="Where roles come from: speaker | pattern | meta:FIELD | speaker-meta:FIELD")] = "speaker",
    role_pattern: Annotated[List[str], typer.Option("--role-pattern", help="ROLE=REGEX for --role-source pattern (repeatable)")] = [],
    first_role: Annotated[List[str], typer.Option("--first-role", help="Keep pairs whose first turn has this role (repeatable)")] = [],
    second_role: Annotated[List[str], typer.Option("--second-role", help="Keep pairs whose second turn has this role (repeatable)")] = [],
    unify_names: Annotated[bool, typer.Option("--unify-names", help="mediasum: ContextDeP's speaker-name normalisation")] = False,
    by_timestamp: Annotated[bool, typer.Option("--by-timestamp", help="convokit: order utterances by timestamp")] = False,
    reader_option: Annotated[List[str], typer.Option("--reader-option", help="KEY=VALUE for the format's reader, e.g. text1=question (repeatable)")] = [],
    output_format: Annotated[str, typer.Option("--output-format", help="jsonl | convokit (ConvoKit input only: a copy of the corpus with the results in its meta)")] = "jsonl",
    meta_prefix: Annotated[str, typer.Option("--meta-prefix", help="convokit output: prefix of the new meta keys")] = DEFAULT_PREFIX,
    errors: Annotated[Optional[Path], typer.Option("--errors", help="Skips and malformed records (default: OUTPUT.errors.jsonl)")] = None,
    batch_size: Annotated[int, typer.Option("--batch-size", "-b", help="Pairs per batch")] = 64,
    n_process: Annotated[int, typer.Option("--n-process", "-n", help="CPU processes (local engine)")] = 1,
    gpu_id: GpuId = -1,
    limit: Annotated[Optional[int], typer.Option("--limit", help="Stop after the first N pairs (skipped ones included)")] = None,
    with_probs: Annotated[bool, typer.Option("--with-probs", help="Also write one probability per word")] = False,
    no_count: Annotated[bool, typer.Option("--no-count", help="Skip the first pass that counts pairs for the progress bar's ETA")] = False,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Start over instead of resuming or refusing")] = False,
    engine: Annotated[str, typer.Option("--engine", help="local | ray")] = "local",
    heap: Annotated[str, typer.Option("--heap", help="fast | lean: the C heap's policy, speed or the least memory (docs/annotate.md)")] = DEFAULT_HEAP_POLICY,
    address: Annotated[Optional[str], typer.Option("--address", help="Ray cluster address (engine ray)")] = None,
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
    if is_stdio(input_path) and fmt is None:
        fmt = "pairs"
    source = run_command(source_options, fmt, pairing, role_source, role_pattern, first_role, second_role,
                         reader_option, unify_names, by_timestamp)
    to_stdout = is_stdio(output)
    with standard_streams(input_path, output) as (input_path, output):  # output -: messages on standard error
        if to_stdout:
            run_command(_check_stdout, engine, output_format)
        summary = run_command(
            annotate, model, input_path, output, source, engine=engine, output_format=output_format,
            meta_prefix=meta_prefix, address=address, n_process=n_process, errors=errors, batch_size=batch_size,
            gpu_id=gpu_id, limit=limit, with_probs=with_probs, count=not no_count, overwrite=overwrite, heap=heap,
        )
        print_summary(summary, output)
