"""``validate sheet`` and ``validate score``: the sample, the sheet, coded
sheets in and scores out, bad sheets."""
import csv
import json
import re

import pytest
from typer.testing import CliRunner

from spacy_paraphrase.cli import app
from spacy_paraphrase.validation.sheet import allocate, draw
from tests.report.helpers import corpus, failed, write_records

runner = CliRunner()


def _out(result) -> str:
    return " ".join(result.output.split())


def _rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _write(path, rows, columns=("pair_id", "label")):
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_allocation_is_equal_and_gives_small_strata_all_their_pairs():
    assert allocate({"a": 3, "b": 100, "c": 100}, 30) == {"a": 3, "b": 14, "c": 13}
    assert allocate({"a": 3, "b": 4}, 50) == {"a": 3, "b": 4}


def test_margin_strata_oversample_borderline_pairs_and_the_draw_is_seeded():
    records = corpus(30, 10, seed=2)
    sample, design = draw(records, 40, "margin", seed=5)
    assert len(sample) == 40 == design["n"] and len({r["pair_id"] for r in sample}) == 40
    assert sum(s["population"] for s in design["strata"].values()) == 300
    near = [r for r in records if abs(r["margin"]) < 0.05]
    drawn_near = [r for r in sample if abs(r["margin"]) < 0.05]
    assert len(drawn_near) / 40 > 2 * len(near) / 300  # borderline pairs get more than their share
    assert [r["pair_id"] for r in draw(records, 40, "margin", seed=5)[0]] == [r["pair_id"] for r in sample]
    assert [r["pair_id"] for r in draw(records, 40, "margin", seed=6)[0]] != [r["pair_id"] for r in sample]
    with pytest.raises(ValueError, match="choose one of margin, decision, none"):
        draw(records, 10, "score", 0)


def test_no_file_handed_to_the_coders_tells_the_models_answer(tmp_path):
    records = corpus(6, 5)
    path = write_records(tmp_path / "r.jsonl", records)
    result = runner.invoke(app, ["validate", "sheet", str(path), "-o", str(tmp_path / "coders" / "sheet.csv"),
                                 "--n", "12"])
    assert result.exit_code == 0, result.output
    rows = _rows(tmp_path / "coders" / "sheet.csv")
    assert len(rows) == 12 and list(rows[0]) == ["pair_id", "conversation_id", "first_speaker", "first_text",
                                                  "second_speaker", "second_text", "label", "highlight", "note"]
    assert all(r["label"] == "" for r in rows)
    # the design (stratum names = the model's decisions) went beside the records, not to the coders
    design = json.loads((tmp_path / "sheet.design.json").read_text())
    assert design["stratify"] == "margin" and design["threshold"] == 0.4
    handed = sorted(p.name for p in (tmp_path / "coders").iterdir())
    assert handed == ["sheet.coding.html", "sheet.csv", "sheet.html"]
    for name in handed:
        text = re.sub(r"<style>.*?</style>", "", (tmp_path / "coders" / name).read_text(encoding="utf-8").lower(),
                      flags=re.S)
        assert all(r["pair_id"] in text for r in rows)
        for word in ("score", "margin", "threshold", "is_paraphrase", "decision", "stratum", "design", "true",
                     "false", *(h.lower() for h in design["strata"])):
            assert word not in text, (name, word)
        assert not re.search(r"\d\.\d", text)  # no score, margin or threshold


def test_the_design_never_goes_into_the_sheets_folder(tmp_path):
    path = write_records(tmp_path / "r.jsonl", corpus(6, 5))
    for args in (["-o", str(tmp_path / "sheet.csv")],
                 ["-o", str(tmp_path / "c" / "sheet.csv"), "--design-out", str(tmp_path / "c" / "d.json")],
                 ["-o", str(tmp_path / "c" / "sheet.csv"), "--design-out", str(tmp_path / "c" / "x" / "d.json")]):
        result = runner.invoke(app, ["validate", "sheet", str(path), *args])
        assert "would lie in the coding sheet's folder" in failed(result), args
        assert not (tmp_path / "c").exists() and not (tmp_path / "sheet.csv").exists()
    result = runner.invoke(app, ["validate", "sheet", str(path), "-o", str(tmp_path / "c" / "sheet.csv"),
                                 "--design-out", str(tmp_path / "analyst" / "d.json")])
    assert result.exit_code == 0 and (tmp_path / "analyst" / "d.json").is_file()
    # drawn again: its own design is replaced; another sheet's design is not
    again = ["validate", "sheet", str(path), "--design-out", str(tmp_path / "analyst" / "d.json"), "-o"]
    assert runner.invoke(app, again + [str(tmp_path / "c" / "sheet.csv")]).exit_code == 0
    result = runner.invoke(app, again + [str(tmp_path / "c2" / "sheet.csv")])
    assert "d.json holds the design of another sheet" in failed(result)


def _design(tmp_path) -> str:
    return f"--design={tmp_path / 'sheet.design.json'}"


def _coded(tmp_path, flips=(), n=24):
    """Records in tmp_path, a sheet of n pairs in tmp_path/coders (its design beside the records), coded
    as ann.csv (the model's answers) and bo.csv (the same but for the rows in flips)."""
    records = corpus(12, 4, seed=3)
    path = write_records(tmp_path / "r.jsonl", records)
    assert runner.invoke(app, ["validate", "sheet", str(path), "-o", str(tmp_path / "coders" / "sheet.csv"),
                               "--n", str(n)]).exit_code == 0
    by_id = {r["pair_id"]: r for r in records}
    rows = _rows(tmp_path / "coders" / "sheet.csv")
    for name, flipped in (("ann", set()), ("bo", set(flips))):
        _write(tmp_path / f"{name}.csv", [dict(r, label=int(by_id[r["pair_id"]]["is_paraphrase"]) ^ (i in flipped))
                                          for i, r in enumerate(rows)])
    return path, rows


def test_score_of_two_coders_and_the_report_section(tmp_path):
    path, rows = _coded(tmp_path, flips=(0, 1, 2))
    result = runner.invoke(app, ["validate", "score", str(tmp_path / "ann.csv"), str(tmp_path / "bo.csv"),
                                 "-r", str(path), "-o", str(tmp_path / "scores.json"), "--n-boot", "300", _design(tmp_path)])
    assert result.exit_code == 0, result.output
    scores = json.loads((tmp_path / "scores.json").read_text())
    assert scores["coders"] == ["ann", "bo"] and scores["pairs_coded"] == 24 and scores["labels"] == 48
    assert scores["design"]["path"] == str(tmp_path / "sheet.design.json")
    # ann agrees with the model everywhere; bo differs on 3 pairs, ties counted as half by default
    humans = scores["agreement"]["humans"]
    assert humans["percent_agreement"] == pytest.approx(21 / 24)
    assert scores["ties"] == {"rule": "half", "pairs": 3, "meaning": "a tie counts as half a paraphrase"}
    assert "Krippendorff's alpha, coders" in result.output
    assert "pairs with a tied vote: 3 (--tie half: a tie counts as half a paraphrase)" in _out(result)
    # stratified by the model's margin: the design-based rate alone, and why
    assert "rogan_gladen" not in scores["rate"] and scores["estimator"]["used"] == "design-based"
    assert "estimator: design-based (the sample is stratified by the model's output" in _out(result)
    report = runner.invoke(app, ["report", str(path), "-o", str(tmp_path / "rep"), "--validation",
                                 str(tmp_path / "scores.json"), "--n-boot", "200"])
    assert report.exit_code == 0, report.output
    page = (tmp_path / "rep" / "index.html").read_text(encoding="utf-8")
    assert "Validation against human coders" in page and "design-based" in page
    assert "--tie half: a tie counts as half a paraphrase" in page


def test_bad_sheets_name_the_rows(tmp_path):
    path, rows = _coded(tmp_path)
    bad = [dict(r, label=1) for r in rows]
    bad[0]["label"] = ""
    bad[2]["label"] = "maybe"
    bad[3]["pair_id"] = bad[4]["pair_id"]
    bad[5]["pair_id"] = "nope-1"
    _write(tmp_path / "bad.csv", bad)
    result = runner.invoke(app, ["validate", "score", str(tmp_path / "bad.csv"), "-r", str(path), _design(tmp_path)])
    assert ("bad.csv: missing label in rows 2; unknown label in rows 4; pair id twice in rows 6; "
            "pair id not in the records in rows 7 (e.g. 'maybe'; use 1/0, yes/no)") in failed(result)
    _write(tmp_path / "nolabel.csv", rows, ("pair_id", "first_text"))
    result = runner.invoke(app, ["validate", "score", str(tmp_path / "nolabel.csv"), "-r", str(path), _design(tmp_path)])
    assert "nolabel.csv: no label column" in failed(result)


def test_pairs_outside_the_design_and_a_report_of_other_records_are_refused(tmp_path):
    path, rows = _coded(tmp_path)
    drawn = {r["pair_id"] for r in rows}
    extra = next(r["pair_id"] for r in corpus(12, 4, seed=3) if r["pair_id"] not in drawn)
    _write(tmp_path / "more.csv", [dict(r, label=1) for r in rows] + [{"pair_id": extra, "label": 0}])
    result = runner.invoke(app, ["validate", "score", str(tmp_path / "more.csv"), "-r", str(path),
                                 "--design", str(tmp_path / "sheet.design.json")])
    assert "pairs not drawn in the design" in failed(result) and extra in _out(result)
    assert runner.invoke(app, ["validate", "score", str(tmp_path / "ann.csv"), "-r", str(path), "-o",
                               str(tmp_path / "s.json"), _design(tmp_path)]).exit_code == 0
    old = json.loads((tmp_path / "s.json").read_text())
    old["rate"]["sample_weighted"] = old["rate"].pop("design_based")  # a scores file of the previous version
    (tmp_path / "old.json").write_text(json.dumps(old))
    result = runner.invoke(app, ["report", str(path), "-o", str(tmp_path / "rep"), "--validation",
                                 str(tmp_path / "old.json")])
    assert "not a scores file written by this version's 'validate score'" in failed(result)
    new = write_records(tmp_path / "other.jsonl", corpus(3, 3, threshold=0.6))
    result = runner.invoke(app, ["report", str(new), "-o", str(tmp_path / "rep"), "--validation",
                                 str(tmp_path / "s.json")])
    assert "scored records of threshold 0.4, these records have 0.6" in failed(result)


def test_one_coder_has_no_agreement_but_is_the_reference(tmp_path):
    path, rows = _coded(tmp_path)
    result = runner.invoke(app, ["validate", "score", str(tmp_path / "ann.csv"), "-r", str(path), "-o",
                                 str(tmp_path / "s.json"), "--n-boot", "200", _design(tmp_path)])
    assert result.exit_code == 0, result.output
    scores = json.loads((tmp_path / "s.json").read_text())
    assert scores["agreement"]["humans"] == {"coders": 1, "krippendorff_alpha": None, "cohen_kappa": None,
                                             "percent_agreement": None}
    # ann labelled every pair as the model decided
    assert scores["model_vs_majority"]["f1"]["value"] == 1.0 and scores["agreement"]["model_vs_majority"]["cohen_kappa"] == 1.0


def test_the_design_is_given_not_guessed(tmp_path):
    path, rows = _coded(tmp_path)
    # design files beside the coders' sheets are never picked up: --design is required
    (tmp_path / "a.design.json").write_text((tmp_path / "sheet.design.json").read_text())
    (tmp_path / "b.design.json").write_text((tmp_path / "sheet.design.json").read_text())
    result = runner.invoke(app, ["validate", "score", str(tmp_path / "ann.csv"), "-r", str(path)])
    assert "give --design DESIGN.json" in failed(result)
    # --design none: a simple random sample, where Rogan-Gladen is valid and reported beside the design-based rate
    result = runner.invoke(app, ["validate", "score", str(tmp_path / "ann.csv"), "-r", str(path), "--design", "none",
                                 "-o", str(tmp_path / "s.json"), "--n-boot", "200"])
    assert result.exit_code == 0, result.output
    scores = json.loads((tmp_path / "s.json").read_text())
    assert set(scores["rate"]) == {"model", "design_based", "rogan_gladen"}
    assert "estimator: design-based and Rogan-Gladen (the sample was drawn without regard" in _out(result)


def test_the_tie_rule_is_explicit(tmp_path):
    path, rows = _coded(tmp_path, flips=(0, 1, 2))
    got = {}
    for rule in ("half", "exclude", "paraphrase", "not-paraphrase"):
        result = runner.invoke(app, ["validate", "score", str(tmp_path / "ann.csv"), str(tmp_path / "bo.csv"),
                                     "-r", str(path), _design(tmp_path), "--tie", rule, "--n-boot", "100", "-o",
                                     str(tmp_path / f"{rule}.json")])
        assert result.exit_code == 0 and f"--tie {rule}:" in _out(result)
        got[rule] = json.loads((tmp_path / f"{rule}.json").read_text())
    design = json.loads((tmp_path / "sheet.design.json").read_text())
    ann = {r["pair_id"]: int(r["label"]) for r in _rows(tmp_path / "ann.csv")}
    tied = {r["pair_id"] for i, r in enumerate(rows) if i in (0, 1, 2)}
    population = {h: s["population"] for h, s in design["strata"].items()}

    def weighted(value):  # the design-based rate, by hand
        by = {}
        for pid, h in design["pairs"].items():
            if value(pid) is not None:
                by.setdefault(h, []).append(value(pid))
        return sum(population[h] * sum(v) / len(v) for h, v in by.items()) / sum(population[h] for h in by)
    for rule, tie in (("half", 0.5), ("paraphrase", 1), ("not-paraphrase", 0), ("exclude", None)):
        expected = weighted(lambda pid: tie if pid in tied else ann[pid])
        assert got[rule]["rate"]["design_based"]["value"] == pytest.approx(expected), rule
    # two coders: the mean vote is the majority with ties as half, so it is shown only for other rules
    assert "mean_vote" not in got["half"]
    assert got["exclude"]["mean_vote"]["rate"]["value"] == pytest.approx(got["half"]["rate"]["design_based"]["value"])
    result = runner.invoke(app, ["validate", "score", str(tmp_path / "ann.csv"), "-r", str(path), _design(tmp_path),
                                 "--tie", "coin"])
    assert "--tie 'coin': choose one of half, exclude" in failed(result)


@pytest.mark.parametrize("args,message", [
    (["-o", "c/sheet.csv", "--n", "0"], "--n must be at least 1"),
    (["-o", "c/sheet.csv", "--stratify", "score"], "choose one of margin, decision, none"),
    (["-o", "sheet.xlsx"], "the coding sheet is a .csv file"),
    (["-o", "r.csv"], "is the input"),
])
def test_bad_sheet_options_end_with_one_line(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    write_records(tmp_path / "r.jsonl", corpus(2, 2))
    (tmp_path / "r.csv").write_text((tmp_path / "r.jsonl").read_text())
    records = "r.csv" if "r.csv" in args else "r.jsonl"
    result = runner.invoke(app, ["validate", "sheet", records, *args])
    assert message in failed(result)


def test_records_without_scores_give_no_sheet(tmp_path):
    from tests.report.helpers import record

    path = write_records(tmp_path / "r.jsonl", [record("a-1", "a", None)])
    result = runner.invoke(app, ["validate", "sheet", str(path), "-o", str(tmp_path / "c" / "s.csv")])
    assert "no record has a score" in failed(result)
    assert not (tmp_path / "c").exists()


def test_a_stratum_nobody_coded_is_named(tmp_path):
    path, rows = _coded(tmp_path)
    design = json.loads((tmp_path / "sheet.design.json").read_text())
    stratum = sorted(design["strata"])[0]
    kept = [r for r in rows if design["pairs"][r["pair_id"]] != stratum]
    _write(tmp_path / "part.csv", [dict(r, label=1) for r in kept])
    result = runner.invoke(app, ["validate", "score", str(tmp_path / "part.csv"), "-r", str(path),
                                 "--design", str(tmp_path / "sheet.design.json"), "--n-boot", "200"])
    assert result.exit_code == 0 and f"No coded pair in the strata {stratum}" in _out(result)


def test_a_design_of_other_records_is_refused(tmp_path):
    path, rows = _coded(tmp_path)
    design = json.loads((tmp_path / "sheet.design.json").read_text())
    (tmp_path / "other.design.json").write_text(json.dumps(dict(design, threshold=0.7)))
    result = runner.invoke(app, ["validate", "score", str(tmp_path / "ann.csv"), "-r", str(path),
                                 "--design", str(tmp_path / "other.design.json")])
    assert "drawn from records of threshold 0.7, these have 0.4" in failed(result)


def test_an_error_is_one_line_when_piped_whatever_the_width(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, COLUMNS="40", PYTHONPATH=str(root))
    proc = subprocess.run([sys.executable, "-m", "spacy_paraphrase", "validate", "score", "ann.csv", "-r", "a_records_file_that_is_not_there.jsonl",
                           "--design", "none"], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert proc.returncode == 1 and len(proc.stdout) > 40, proc.stdout + proc.stderr
    assert proc.stdout.count("\n") == 1 and "\x1b" not in proc.stdout and "a_records_file_that_is_not_there.jsonl" in proc.stdout
