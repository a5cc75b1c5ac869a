"""``report`` and ``validate sheet`` on what ``annotate`` really writes (the
tests' tiny pipeline): the model from the run's checkpoint, the threshold
from the records, the skipped and malformed counts from its errors file, a
ConvoKit output with its meta."""
import csv

import pytest
import spacy
from typer.testing import CliRunner

from spacy_paraphrase.cli import app
from tests.annotate.helpers import read_jsonl, write_convokit, write_mediasum

runner = CliRunner()


@pytest.fixture(scope="module")
def model(trained_pipeline, tmp_path_factory):
    nlp, _ = trained_pipeline
    path = tmp_path_factory.mktemp("report_model") / "model"
    nlp.to_disk(path)
    return path


def _summary(path):
    with open(path, newline="", encoding="utf-8") as f:
        return {row["key"]: row["value"] for row in csv.DictReader(f)}


def test_report_of_an_annotate_run(model, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_mediasum(tmp_path / "news.jsonl", n_copies=2, extra_lines=["{oops"])
    result = runner.invoke(app, ["annotate", str(model), "news.jsonl", "out.jsonl", "--format", "mediasum",
                                 "--with-probs"])
    assert result.exit_code == 0, result.output
    records = read_jsonl(tmp_path / "out.jsonl")
    result = runner.invoke(app, ["report", "out.jsonl", "-o", "rep", "--by", "second.speaker", "--n-boot", "200"])
    assert result.exit_code == 0, result.output
    summary = _summary(tmp_path / "rep" / "summary.csv")
    threshold = spacy.load(model).get_pipe("paraphrase_spans").cfg["threshold"]
    assert float(summary["threshold"]) == pytest.approx(threshold, abs=1e-4)
    assert summary["model"] == str(model.resolve())  # outside the working directory: as the checkpoint has it
    assert summary["pairs"] == str(len(records)) and summary["conversations"] == "4"
    assert summary["paraphrases"] == str(sum(r["is_paraphrase"] for r in records))
    assert (summary["skipped (errors file)"], summary["malformed (errors file)"]) == ("2", "1")
    # the example pairs are drawn with their per-word probabilities (read again for them only)
    assert 'class="spp-w' in (tmp_path / "rep" / "pairs.html").read_text(encoding="utf-8")
    result = runner.invoke(app, ["validate", "sheet", "out.jsonl", "-o", "sheet.csv", "--n", "3"])
    assert result.exit_code == 0, result.output
    with open(tmp_path / "sheet.csv", newline="", encoding="utf-8") as f:
        assert len(list(csv.DictReader(f))) == 3


def test_report_of_a_convokit_output(model, tmp_path):
    corpus = write_convokit(tmp_path / "kit")
    out = tmp_path / "annotated"
    result = runner.invoke(app, ["annotate", str(model), str(corpus), str(out), "--output-format", "convokit"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["report", str(out), "-o", str(tmp_path / "rep"), "--by", "conversation.title",
                                 "--by", "second.speaker.is_host", "--n-boot", "200"])
    assert result.exit_code == 0, result.output
    with open(tmp_path / "rep" / "by_conversation_title.csv", newline="", encoding="utf-8") as f:
        groups = {row["group"]: int(row["pairs"]) for row in csv.DictReader(f)}
    records = read_jsonl(out / "sp_annotate.records.jsonl")
    assert groups == {"t": sum(r["conversation_id"] == "CNN-1" for r in records),
                      "u": sum(r["conversation_id"] == "NPR-2" for r in records)}
    assert _summary(tmp_path / "rep" / "summary.csv")["skipped (errors file)"] == "1"
