"""annotate on an input whose guessed format's reader refuses it (a table
guessed from its header, then missing a column): one line, exit 1, and
nothing written: no checkpoint, no empty OUTPUT or errors file, and the files
of an earlier run untouched (with --overwrite too)."""
import pytest
from typer.testing import CliRunner

from spacy_paraphrase.annotate.local import run_local
from spacy_paraphrase.dialogs import SourceOptions
from spacy_paraphrase.cli import app
from spacy_paraphrase.dialogs import DialogFormatError
from tests.annotate.helpers import write_mediasum

runner = CliRunner(env={"COLUMNS": "200"})


def _bad_table(path):
    path.write_text("conversation_id,foo\nc1,x\n", encoding="utf-8")  # guessed: turns; no speaker, text
    return path


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_a_failed_format_guess_writes_nothing(annotate_model, tmp_path):
    corpus = _bad_table(tmp_path / "turns.csv")
    result = runner.invoke(app, ["annotate", annotate_model, str(corpus), str(tmp_path / "out.jsonl")])
    assert result.exit_code == 1, result.output
    assert "missing column(s) ['speaker', 'text']" in " ".join(result.output.split())
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["turns.csv"]


@pytest.mark.parametrize("overwrite", [False, True])
def test_a_failed_format_guess_leaves_an_earlier_run_as_it_was(annotate_model, tmp_path, overwrite):
    out = tmp_path / "out.jsonl"
    good = write_mediasum(tmp_path / "news.jsonl")
    assert runner.invoke(app, ["annotate", annotate_model, str(good), str(out)]).exit_code == 0
    corpus = _bad_table(tmp_path / "turns.csv")
    before = _snapshot(tmp_path)
    result = runner.invoke(app, ["annotate", annotate_model, str(corpus), str(out)]
                           + (["--overwrite"] if overwrite else []))
    assert result.exit_code == 1 and "missing column(s)" in result.output
    assert _snapshot(tmp_path) == before


def test_run_local_raises_before_writing(annotate_model, tmp_path):
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("sentence1\tsentence2\nA cat.\tThe cat.\n", encoding="utf-8")  # guessed: pairs
    with pytest.raises(DialogFormatError, match="missing column"):
        run_local(annotate_model, pairs, tmp_path / "out.jsonl", progress_bar=False,
                  source=SourceOptions(reader_options={"id_column": "qid"}))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pairs.tsv"]
