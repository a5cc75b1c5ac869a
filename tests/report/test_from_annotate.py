"""``report`` and ``validate sheet`` on what ``annotate`` really writes (the
tests' tiny pipeline): the model from the run's checkpoint, the threshold
from the records, the skipped and malformed counts from its errors file, a
ConvoKit output with its meta."""
import csv
import json

import pytest
import spacy
from typer.testing import CliRunner

from spacy_paraphrase.cli import app
from tests.annotate.helpers import MEDIASUM, read_jsonl, write_convokit, write_jsonl, write_mediasum
from tests.report.helpers import failed

runner = CliRunner()


def flat(output: str) -> str:
    return " ".join(output.split())  # wasabi wraps long lines


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
    meta = json.loads((model / "meta.json").read_text(encoding="utf-8"))
    assert summary["model"] == f"{meta['lang']}_{meta['name']} {meta['version']}"  # the package, not a path
    assert summary["model path"] == str(model.resolve())
    assert summary["pairs"] == str(len(records)) and summary["conversations"] == "4"
    assert summary["paraphrases"] == str(sum(r["is_paraphrase"] for r in records))
    assert (summary["skipped (errors file)"], summary["malformed (errors file)"]) == ("2", "1")
    # the example pairs are drawn with their per-word probabilities (read again for them only)
    assert 'class="spp-w' in (tmp_path / "rep" / "pairs.html").read_text(encoding="utf-8")
    result = runner.invoke(app, ["validate", "sheet", "out.jsonl", "-o", "coding/sheet.csv", "--n", "3"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "sheet.design.json").is_file()  # beside the records, not in coding/
    with open(tmp_path / "coding" / "sheet.csv", newline="", encoding="utf-8") as f:
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
    hosts = sum(r["second"]["speaker"] == "HOST" for r in records)
    assert 0 < hosts < len(records)
    assert _groups(tmp_path / "rep" / "by_second_speaker_is_host.csv") == {"True": hosts, "False": len(records) - hosts}
    # the utterance meta of the turn's first utterance, and roles from name patterns, on the same output
    result = runner.invoke(app, ["report", str(out), "-o", str(tmp_path / "rep2"), "--by", "second.meta.paraphrase_is_host",
                                 "--by", "first.role", "--role-pattern", "host=^HOST$", "--role-pattern", "guest=.",
                                 "--n-boot", "200"])
    assert result.exit_code == 0, result.output
    assert _groups(tmp_path / "rep2" / "by_second_meta_paraphrase_is_host.csv") == {
        "True": hosts, "False": len(records) - hosts}
    first_hosts = sum(r["first"]["speaker"] == "HOST" for r in records)
    assert _groups(tmp_path / "rep2" / "by_first_role.csv") == {
        k: v for k, v in {"host": first_hosts, "guest": len(records) - first_hosts}.items() if v}
    result = runner.invoke(app, ["report", str(out), "-o", str(tmp_path / "rep3"), "--by", "conversation.program"])
    assert "no record has the field 'conversation.program'" in failed(result)
    assert "conversation.title" in flat(result.output) and "second.speaker.is_host" in flat(result.output)


def _groups(path):
    with open(path, newline="", encoding="utf-8") as f:
        return {row["group"]: int(row["pairs"]) for row in csv.DictReader(f)}


def test_report_by_role_and_program_of_mediasum_records(model, tmp_path, monkeypatch):
    """MediaSum records keep speaker names only: --role-pattern gives roles,
    --dialogs (the corpus annotate read) the conversations' program and date."""
    monkeypatch.chdir(tmp_path)
    programs = {"CNN-1": ("NEWSROOM", "2019-03-01"), "NPR-2": ("ALL THINGS CONSIDERED", "2020-01-05")}
    write_jsonl(tmp_path / "news.jsonl", [dict(c, program=programs[c["id"]][0], date=programs[c["id"]][1])
                                          for c in MEDIASUM])
    result = runner.invoke(app, ["annotate", str(model), "news.jsonl", "out.jsonl", "--format", "mediasum"])
    assert result.exit_code == 0, result.output
    records = read_jsonl(tmp_path / "out.jsonl")
    args = ["report", "out.jsonl", "-o", "rep", "--n-boot", "200", "--by", "conversation.program"]
    result = runner.invoke(app, args)  # without the corpus: a clear error saying where the field comes from
    assert "no record has the field 'conversation.program'" in failed(result)
    assert "--dialogs" in flat(result.output) and not (tmp_path / "rep").exists()
    result = runner.invoke(app, args + ["--dialogs", "news.jsonl", "--by", "second.role", "--role-pattern",
                                        "host=^HOST$", "--role-pattern", "guest=.", "--by-time", "conversation.date:year"])
    assert result.exit_code == 0, result.output
    per_conversation = {c: sum(r["conversation_id"] == c for r in records) for c in programs}
    assert _groups(tmp_path / "rep" / "by_conversation_program.csv") == {
        programs[c][0]: n for c, n in per_conversation.items()}
    assert _groups(tmp_path / "rep" / "time_conversation_date_year.csv") == {
        programs[c][1][:4]: n for c, n in per_conversation.items()}
    hosts = sum(r["second"]["speaker"] == "HOST" for r in records)
    assert 0 < hosts < len(records)
    assert _groups(tmp_path / "rep" / "by_second_role.csv") == {"host": hosts, "guest": len(records) - hosts}
    # a field neither the records nor the corpus has: the error lists the fields there are
    result = runner.invoke(app, args[:-1] + ["conversation.station", "--dialogs", "news.jsonl"])
    assert "no record has the field 'conversation.station'" in failed(result)
    assert "conversation.program" in flat(result.output)
    result = runner.invoke(app, args[:-1] + ["second.role"])
    assert "--role-pattern" in failed(result)
    for bad in ("host", "host=("):
        result = runner.invoke(app, args[:-1] + ["second.role", "--role-pattern", bad])
        assert "--role-pattern" in failed(result), result.output
    result = runner.invoke(app, args + ["--dialogs", "out.jsonl"])  # not the corpus these records came from
    assert "--dialogs" in failed(result)


def test_report_by_a_role_column_of_a_turn_table(model, tmp_path, monkeypatch):
    """A turn table with its own column names: --dialogs reads it with the
    reader options of the annotate run (from its checkpoint)."""
    monkeypatch.chdir(tmp_path)
    rows = [("talk", "who", "said", "role")]
    for c in MEDIASUM:
        rows += [(c["id"], s, t, "host" if s == "HOST" else "guest") for t, s in zip(c["utt"], c["speaker"])]
    with open(tmp_path / "talks.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    result = runner.invoke(app, ["annotate", str(model), "talks.csv", "talks.jsonl", "--format", "turns",
                                 "--reader-option", "conversation_column=talk", "--reader-option", "speaker_column=who",
                                 "--reader-option", "text_column=said"])
    assert result.exit_code == 0, result.output
    records = read_jsonl(tmp_path / "talks.jsonl")
    result = runner.invoke(app, ["report", "talks.jsonl", "-o", "rep", "--n-boot", "200", "--by", "second.meta.role",
                                 "--dialogs", "talks.csv"])
    assert result.exit_code == 0, result.output
    hosts = sum(r["second"]["speaker"] == "HOST" for r in records)
    assert _groups(tmp_path / "rep" / "by_second_meta_role.csv") == {"host": hosts, "guest": len(records) - hosts}
