"""``report``: the records it reads (JSON Lines, a Ray directory, a ConvoKit
corpus written by annotate), the files it writes, and bad input."""
import csv
import json
import re

import pytest
from typer.testing import CliRunner

from spacy_paraphrase.cli import app
from spacy_paraphrase.report.build import ReportError, make_report
from spacy_paraphrase.report.records import RecordsFileError, read_records_and_runs
from tests.annotate.helpers import rename_record_keys, with_renamed_keys, write_convokit
from tests.report.helpers import corpus, failed, record, write_records

runner = CliRunner()


def _out(result) -> str:
    return " ".join(result.output.split())  # wasabi wraps long lines


def _csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_report_writes_the_page_and_every_table(tmp_path):
    records = corpus()
    path = write_records(tmp_path / "r.jsonl", records)
    out = make_report([path], tmp_path / "rep", by=["second.speaker", "meta.program"], by_time=["meta.date:year"],
                      n_boot=500)
    assert out["files"] == ["index.html", "summary.csv", "by_second_speaker.csv", "by_meta_program.csv",
                            "time_meta_date_year.csv", "scores.csv", "phrases.csv", "pairs.html"]
    summary = {r["key"]: r["value"] for r in _csv(tmp_path / "rep" / "summary.csv")}
    n_yes = sum(r["is_paraphrase"] for r in records)
    assert summary["pairs"] == "96" and summary["paraphrases"] == str(n_yes) and summary["conversations"] == "12"
    assert float(summary["threshold"]) == 0.4 and float(summary["paraphrase rate"]) == n_yes / 96
    hosts = {r["group"]: r for r in _csv(tmp_path / "rep" / "by_second_speaker.csv")}
    assert set(hosts) == {"HOST0", "HOST1", "HOST2"}
    for host, row in hosts.items():
        mine = [r for r in records if r["second"]["speaker"] == host]
        assert int(row["pairs"]) == len(mine) and int(row["paraphrases"]) == sum(r["is_paraphrase"] for r in mine)
        assert float(row["low"]) <= float(row["rate"]) <= float(row["high"])
    years = _csv(tmp_path / "rep" / "time_meta_date_year.csv")
    assert [r["group"] for r in years] == ["2010", "2011", "2012", "2013"]
    assert sum(int(r["pairs"]) for r in _csv(tmp_path / "rep" / "scores.csv")) == 96
    phrases = _csv(tmp_path / "rep" / "phrases.csv")
    # "running with dogs": its content words lemmatised by the lookup lemmatizer ("run" and "dog" alone
    # only ever occur inside it: left out)
    assert [p["phrase"] for p in phrases] == ["run dog"] and int(phrases[0]["count"]) == n_yes
    page = (tmp_path / "rep" / "index.html").read_text(encoding="utf-8")
    assert page.count("<svg") == 4 and "<metadata" not in page
    assert not [u for u in re.findall(r"(?:src|href)=\"([^\"#]*)", page) if u not in ("", "pairs.html")]
    assert "pairs.html#spp-" in page and "<script" not in page
    # the example pairs in three labelled lists, the highest scores in score order
    assert "Examples of the phrases above (1)" in page and "Highest scores (10)" in page
    assert "Most borderline (smallest |score − threshold|) (10)" in page
    top = page.split("Highest scores (10)")[1].split("Most borderline")[0]
    best = sorted(records, key=lambda r: -r["score"])[:10]
    assert re.findall(r'>(c\d+-\d+)</a>', top) == [r["pair_id"] for r in best]


def test_phrases_are_runs_of_content_lemmas_shared_across_spans():
    from spacy_paraphrase.report.phrases import top_phrases

    spans = ["a big dog", "the big dogs!", "big dogs barking", "a cat"]
    records = [dict(record(f"p-{i}", "p", 0.9), spans=[{"side": "second", "label": "PARAPHRASE", "text": t}])
               for i, t in enumerate(spans)]
    rows, lemmatised = top_phrases(records)
    assert lemmatised
    # "big dog" in 3 spans ("big", "dog" only inside it); "big dog bark" once, its parts "bark", "dog bark" inside it
    assert [(r["phrase"], r["count"], r["pairs"]) for r in rows] == [("big dog", 3, 3), ("big dog bark", 1, 1),
                                                                      ("cat", 1, 1)]
    assert rows[0]["example_pair_id"] == "p-0" and rows[2]["example_text"] == "a cat"


def test_ray_directory_and_convokit_corpus_are_read(tmp_path):
    ray = tmp_path / "ray"
    ray.mkdir()
    records = corpus(3, 2)
    write_records(ray / "a.jsonl", records[:3])
    write_records(ray / "b.jsonl", records[3:])
    assert [r["pair_id"] for r in read_records_and_runs([ray]).records] == [r["pair_id"] for r in records]
    kit = write_convokit(tmp_path / "kit")
    # CNN-1: GUEST turn 1-2 answered by HOST turn 3; NPR-2: GUEST 0 answered by HOST 1
    pairs = [record("CNN-1-3", "CNN-1", 0.9), record("NPR-2-1", "NPR-2", 0.1)]
    pairs[0]["first"]["utterance_ids"], pairs[0]["second"]["utterance_ids"] = ["CNN-1-1", "CNN-1-2"], ["CNN-1-3"]
    pairs[0]["first"]["offsets"] = [[0, 6], [7, len(pairs[0]["first"]["text"])]]  # "I went" + "running ..."
    pairs[1]["first"]["utterance_ids"], pairs[1]["second"]["utterance_ids"] = ["NPR-2-0"], ["NPR-2-1"]
    pairs[0]["spans"] = []
    write_records(kit / "sp_annotate.records.jsonl", pairs)
    (kit / "sp_annotate.errors.jsonl").write_text('{"kind": "skipped"}\n{"kind": "malformed"}\n{"kind": "skipped"}\n')
    (kit / "sp_annotate.records.jsonl.checkpoint.json").write_text(json.dumps(
        {"fingerprint": {"model": {"path": "/models/m", "stamps": {}}}}))
    out = make_report([kit], tmp_path / "rep", by=["conversation.title", "second.speaker.is_host",
                                                   "second.meta.position"], n_boot=200)
    summary = out["summary"]
    assert (summary["skipped (errors file)"], summary["malformed (errors file)"]) == (2, 1)
    assert (summary["model"], summary["model path"]) == ("m", "/models/m")  # no meta.json there: the directory's name
    titles = {r["group"]: r["rate"] for r in _csv(tmp_path / "rep" / "by_conversation_title.csv")}
    assert titles == {"t": "1.0", "u": "0.0"}
    assert [r["group"] for r in _csv(tmp_path / "rep" / "by_second_speaker_is_host.csv")] == ["True"]
    assert {r["group"] for r in _csv(tmp_path / "rep" / "by_second_meta_position.csv")} == {"3", "1"}


def test_records_of_two_thresholds_are_refused_naming_both(tmp_path):
    a = write_records(tmp_path / "a.jsonl", corpus(2, 2, threshold=0.4))
    b = write_records(tmp_path / "b.jsonl", [record("x-1", "x", 0.7, threshold=0.55)])
    with pytest.raises(RecordsFileError, match=r"two thresholds: 0\.4 \(.*a\.jsonl, line 1\) and 0\.55 \(.*b\.jsonl"):
        read_records_and_runs([a, b])


def test_records_of_two_models_are_refused_naming_both(tmp_path):
    paths = []
    for name in ("a", "b"):
        paths.append(write_records(tmp_path / f"{name}.jsonl", [record(f"{name}-1", name, 0.5)]))
        (tmp_path / f"{name}.jsonl.checkpoint.json").write_text(json.dumps(
            {"fingerprint": {"model": {"path": f"/models/{name}"}}}))
    with pytest.raises(RecordsFileError, match="two models: /models/a .* and /models/b"):
        read_records_and_runs(paths)


def test_a_field_no_record_has_is_a_clear_error(tmp_path):
    path = write_records(tmp_path / "r.jsonl", corpus(2, 2))
    with pytest.raises(ReportError, match=r"no record has the field 'meta.year'; fields of these records: "
                                          r"conversation_id, first.speaker, meta.date, meta.program, second.speaker"):
        make_report([path], tmp_path / "rep", by=["meta.year"])
    for field in ("conversation.program", "second.speaker.party", "first.meta.role", "second.timestamp"):
        with pytest.raises(ReportError, match=f"no record has the field '{field}'.*--dialogs CORPUS"):
            make_report([path], tmp_path / "rep", by=[field])  # every field the corpus meta could supply: the hint
    with pytest.raises(ReportError, match="expected FIELD:month or FIELD:year"):
        make_report([path], tmp_path / "rep", by_time=["meta.date:week"])
    with pytest.raises(ReportError, match="no value of 'meta.program' is a date"):
        make_report([path], tmp_path / "rep", by_time=["meta.program:year"])
    assert not (tmp_path / "rep").exists()


def test_one_conversation_marks_the_intervals_not_estimable(tmp_path):
    path = write_records(tmp_path / "r.jsonl", [record(f"c-{i}", "c", s) for i, s in enumerate([0.1, 0.5, 0.9])])
    result = runner.invoke(app, ["report", str(path), "-o", str(tmp_path / "rep"), "--by", "second.speaker"])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "rep" / "index.html").read_text(encoding="utf-8")
    assert "not estimable: fewer than 2 conversations" in page
    assert _csv(tmp_path / "rep" / "by_second_speaker.csv")[0]["low"] == ""
    assert "(bootstrap over 1 conversation:" in page and "1 group, all drawn and in by_second_speaker.csv" in page
    # the bin edges read as written: 0.15, not 0.15000000000000002
    assert [r["low"] for r in _csv(tmp_path / "rep" / "scores.csv")][:4] == ["0.0", "0.05", "0.1", "0.15"]


@pytest.mark.parametrize("args,message", [
    (["--by", "nope"], "no record has the field 'nope'"),
    (["--n-boot", "5"], "--n-boot must be at least 100"),
    (["--validation", "missing.json"], "--validation missing.json: No such file"),
])
def test_bad_options_end_with_one_line(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    write_records(tmp_path / "r.jsonl", corpus(2, 2))
    result = runner.invoke(app, ["report", "r.jsonl", "-o", "rep", *args])
    assert message in failed(result)


def test_bad_records_and_an_output_over_the_input_are_refused(tmp_path):
    (tmp_path / "bad.jsonl").write_text('{"pair_id": 1, "score": 0.1}\nnot json\n')
    result = runner.invoke(app, ["report", str(tmp_path / "bad.jsonl"), "-o", str(tmp_path / "rep")])
    assert "bad.jsonl, line 2: not valid JSON" in failed(result)
    ray = tmp_path / "ray"
    ray.mkdir()
    write_records(ray / "a.jsonl", corpus(2, 2))
    result = runner.invoke(app, ["report", str(ray), "-o", str(ray)])
    assert "write the report elsewhere" in failed(result)
    assert sorted(p.name for p in ray.iterdir()) == ["a.jsonl"]


def test_pairs_without_a_score_are_counted_and_left_out(tmp_path):
    records = [record("a-1", "a", None), record("a-2", "a", 0.9), record("b-1", None, 0.1)]
    path = write_records(tmp_path / "r.jsonl", records)
    result = runner.invoke(app, ["report", str(path), "-o", str(tmp_path / "rep"), "--n-boot", "200"])
    assert result.exit_code == 0, result.output
    summary = {r["key"]: r["value"] for r in _csv(tmp_path / "rep" / "summary.csv")}
    # b-1 has no conversation: it is its own cluster
    assert (summary["pairs"], summary["pairs without a score"], summary["conversations"]) == ("3", "1", "2")
    assert float(summary["paraphrase rate"]) == 0.5
    path = write_records(tmp_path / "none.jsonl", [record("a-1", "a", None)])
    result = runner.invoke(app, ["report", str(path), "-o", str(tmp_path / "rep2")])
    assert result.exit_code == 0 and "paraphrase rate not defined (no pair has a score)" in _out(result)


def test_per_word_probabilities_are_kept_only_where_asked(tmp_path, monkeypatch):
    records = corpus(2, 2)
    for r in records:
        r["words"] = {"first": [], "second": []}
    path = write_records(tmp_path / "r.jsonl", records)
    kept = read_records_and_runs([path], words_of={"c0-1"}).records
    assert [r["pair_id"] for r in kept if "words" in r] == ["c0-1"]
    assert all("words" in r for r in read_records_and_runs([path]).records)
    # the report holds the records without them and reads them again for its example pairs only
    from spacy_paraphrase.report import build

    calls = []
    monkeypatch.setattr(build, "read_records_and_runs", lambda paths, words_of=None: calls.append(words_of) or
                        read_records_and_runs(paths, words_of=words_of))
    make_report([path], tmp_path / "rep", n_boot=200)
    assert calls[0] == set() and calls[1] and len(calls) == 2


def test_the_report_reads_the_records_keys_from_record_fields(tmp_path, monkeypatch):
    # a key renamed in RECORD_FIELDS is renamed for the report too: records written with it give the same report
    records = corpus(3, 4)
    options = dict(by=["second.speaker", "meta.program"], n_boot=200)
    out = make_report([write_records(tmp_path / "r.jsonl", records)], tmp_path / "rep", **options)
    rename_record_keys(monkeypatch)
    renamed = write_records(tmp_path / "renamed.jsonl", [with_renamed_keys(r) for r in records])
    assert make_report([renamed], tmp_path / "renamed", **options)["files"] == out["files"]
    for name in out["files"]:
        if name.endswith(".csv"):
            rows, again = ([r for r in _csv(tmp_path / d / name) if r.get("key") != "records"]  # the file's name
                           for d in ("rep", "renamed"))
            assert again == rows, name
    pairs = [(tmp_path / d / "pairs.html").read_text(encoding="utf-8") for d in ("rep", "renamed")]
    assert pairs[1].count('class="spp-pair"') == pairs[0].count('class="spp-pair"') > 0
