import sys

from typer.testing import CliRunner

from spacy_paraphrase.cli import app
from tests.annotate.helpers import read_jsonl, write_mediasum

runner = CliRunner()


def test_help_has_a_worked_example():
    result = runner.invoke(app, ["annotate", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "python -m spacy_paraphrase annotate" in result.output
    for option in ("--with-probs", "--n-process", "--gpu-id", "--limit", "--pairing", "--first-role",
                   "--errors", "--no-count", "--overwrite", "--output-format", "--engine", "--address"):
        assert option in result.output


def test_annotate_command_writes_records_and_a_summary(annotate_model, tmp_path):
    corpus = write_mediasum(tmp_path / "news.jsonl", extra_lines=["{oops"])
    out = tmp_path / "out.jsonl"
    args = ["annotate", annotate_model, str(corpus), str(out), "--format", "mediasum", "--role-source", "pattern",
            "--role-pattern", "host=1|HOST", "--role-pattern", "guest=.", "--first-role", "guest",
            "--second-role", "host", "--with-probs", "--batch-size", "2"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "pairs written: 3" in result.output and "malformed records: 1" in result.output
    assert [r["pair_id"] for r in read_jsonl(out)] == ["CNN-1-1", "NPR-2-0", "NPR-2-2"]
    again = runner.invoke(app, args)
    assert again.exit_code == 0 and "complete already" in again.output
    other = runner.invoke(app, args[:-2] + ["--limit", "1"])
    assert other.exit_code == 1 and "--overwrite" in other.output


def test_bad_options_fail_clearly(annotate_model, tmp_path, monkeypatch):
    corpus = write_mediasum(tmp_path / "news.jsonl")
    out = str(tmp_path / "out.jsonl")
    result = runner.invoke(app, ["annotate", annotate_model, str(corpus), out, "--pairing", "threads"])
    assert result.exit_code == 1 and "consecutive, reply-to" in result.output
    result = runner.invoke(app, ["annotate", annotate_model, str(tmp_path / "missing.jsonl"), out])
    assert result.exit_code == 1 and "not found" in result.output
    monkeypatch.setitem(sys.modules, "spacy_paraphrase.annotate.ray_engine", None)  # as if not installed
    result = runner.invoke(app, ["annotate", annotate_model, str(corpus), out, "--engine", "ray"])
    assert result.exit_code == 1 and "spacy-paraphrase[ray]" in result.output
