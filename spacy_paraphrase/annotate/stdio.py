"""``annotate MODEL - -``: pairs from standard input, records to standard output.

Standard input is read whole into a temporary file (JSON Lines when its first
non-blank character is ``{``, else TSV with a header) and read as format
``pairs``: the file is named ``.jsonl`` or ``.tsv`` by that first character
because the table reader tells JSON Lines from a table by the file's
extension (``table_reader.resolve_delimiter``), which standard input has
none of; the format itself is not guessed (``readers.guess_format``). Records go to a temporary file that is copied to standard output
when the run has finished; while it runs, everything printed (messages, the
summary) goes to standard error, so standard output holds the records only.
The temporary files are removed afterwards: a ``-`` output keeps no
checkpoint, and an interrupted run starts over.
"""
import contextlib
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Iterator, Tuple

STDIO = "-"


def is_stdio(path) -> bool:
    return str(path) == STDIO


@contextlib.contextmanager
def standard_streams(input_path: Path, output: Path) -> Iterator[Tuple[Path, Path]]:
    """Yield the (input, output) paths to run on: ``-`` ones replaced by
    temporary files (see the module docstring); the others as given."""
    with tempfile.TemporaryDirectory(prefix="spacy-paraphrase-annotate-") as tmp:
        if is_stdio(input_path):
            text = sys.stdin.read()
            input_path = Path(tmp) / ("stdin.jsonl" if text.lstrip().startswith("{") else "stdin.tsv")
            input_path.write_text(text, encoding="utf-8")
        to_stdout = is_stdio(output)
        if to_stdout:
            output = Path(tmp) / "records.jsonl"
        stdout = sys.stdout
        with contextlib.redirect_stdout(sys.stderr) if to_stdout else contextlib.nullcontext():
            yield input_path, output
        if to_stdout:
            with open(output, encoding="utf-8") as records:
                shutil.copyfileobj(records, stdout)
            stdout.flush()
