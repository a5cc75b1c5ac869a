import numpy
import pytest
import srsly
from spacy.tokens import DocBin
import typer.main
from typer.testing import CliRunner

from spacy_paraphrase.cli import app as main_app
from spacy_paraphrase.visualize.inputs import sort_views
from tests.visualize.helpers import model_doc

# A wide terminal: rich lays --help out (and cuts option names) at the width
# it finds in COLUMNS, so an assertion on help text must not depend on the
# terminal the tests run in (the --help test below runs at 40 columns too).
runner = CliRunner(env={"COLUMNS": "200"})


def _app():
    return main_app


def flat(output: str) -> str:
    """The output with its line breaks undone: wasabi wraps messages at 80
    columns, so a message holding a temporary path breaks at a place that
    depends on the path's length."""
    return " ".join(output.split())


def _docbin(path):
    # Pair scores 0.9, 0.55, 0.3 (threshold 0.3: margins 0.6, 0.25, 0.0); no
    # vote-share map, so agreement = s² + (1 − s)² of the score: 0.82, 0.505, 0.58.
    docs = [model_doc(numpy.full(24, p), pair_id=name) for name, p in (("clear", 0.9), ("contested", 0.55), ("low", 0.3))]
    DocBin(docs=docs, store_user_data=True).to_disk(path)
    return path


def _order(html, names=("clear", "contested", "low")):
    found = [(html.find(f'<span class="spp-id">{n}</span>'), n) for n in names]
    return [n for pos, n in sorted(found) if pos >= 0]


def test_visualize_spacy_file_sorted_and_limited(tmp_path):
    data = _docbin(tmp_path / "pairs.spacy")
    out = tmp_path / "out" / "page.html"
    result = runner.invoke(_app(), ["visualize", str(data), str(out), "--sort", "agreement", "--limit", "2"])
    assert result.exit_code == 0, result.output
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    assert _order(html) == ["contested", "low"]
    assert "Wrote 2 of 3 pair(s)" in flat(result.output)
    runner.invoke(_app(), ["visualize", str(data), str(out), "--sort", "score"])
    assert _order(out.read_text(encoding="utf-8")) == ["clear", "contested", "low"]
    runner.invoke(_app(), ["visualize", str(data), str(out), "--threshold", "0.6"])
    assert out.read_text(encoding="utf-8").count("not a paraphrase") == 2


def test_visualize_other_spans_key(tmp_path):
    doc = model_doc(numpy.full(24, 0.9))
    doc.spans["mine"] = doc.spans["paraphrase"]
    del doc.spans["paraphrase"]
    DocBin(docs=[doc]).to_disk(tmp_path / "p.spacy")
    out = tmp_path / "p.html"
    assert runner.invoke(_app(), ["visualize", str(tmp_path / "p.spacy"), str(out), "--spans-key", "mine"]).exit_code == 0
    assert "spp-span" in out.read_text(encoding="utf-8")


def test_visualize_jsonl_records(tmp_path):
    records = [
        {"pair_id": "r1", "first": {"speaker": "A", "utterance_ids": ["u1"], "text": "I love it here"},
         "second": {"speaker": "B", "utterance_ids": ["u2"], "text": "You like this place"},
         "score": 0.8, "is_paraphrase": True, "agreement": 0.6,
         "spans": [{"side": "second", "label": "PARAPHRASE", "utterance_id": "u2", "start": 4, "end": 8, "text": "like"}]},
    ]
    path = tmp_path / "out.jsonl"
    srsly.write_jsonl(path, records)
    out = tmp_path / "r.html"
    result = runner.invoke(_app(), ["visualize", str(path), str(out)])
    assert result.exit_code == 0, result.output
    assert ">like</mark>" in out.read_text(encoding="utf-8")


def _record(pair_id):
    return {"pair_id": pair_id, "first": {"speaker": "A", "utterance_ids": [f"{pair_id}-0"], "text": "I love it here"},
            "second": {"speaker": "B", "utterance_ids": [f"{pair_id}-1"], "text": "You like this place"},
            "score": 0.8, "is_paraphrase": True, "margin": 0.3, "spans": []}


def test_visualize_reads_a_ray_output_directory_file_by_file(tmp_path):
    """annotate --engine ray writes OUTPUT as a directory of .jsonl parts (docs/ray.md)."""
    ray_out = tmp_path / "out"
    ray_out.mkdir()
    srsly.write_jsonl(ray_out / "b1_000001_000000.jsonl", [_record("ray-p3")])
    srsly.write_jsonl(ray_out / "a0_000000_000000.jsonl", [_record("ray-p1"), _record("ray-p2")])
    page = tmp_path / "page.html"
    result = runner.invoke(_app(), ["visualize", str(ray_out), str(page)])
    assert result.exit_code == 0, result.output
    assert "Wrote 3 of 3 pair(s)" in " ".join(result.output.split())
    html = page.read_text(encoding="utf-8")
    assert html.index("ray-p1") < html.index("ray-p2") < html.index("ray-p3")  # files in name order, lines in order
    (ray_out / "a0_000000_000000.jsonl").write_text('{"pair_id": \n', encoding="utf-8")
    result = runner.invoke(_app(), ["visualize", str(ray_out), str(page)])
    assert result.exit_code == 1 and "a0_000000_000000.jsonl, line 1" in " ".join(result.output.split())


def test_visualize_a_directory_of_no_records_says_what_to_pass(tmp_path):
    out = tmp_path / "x.html"
    (tmp_path / "empty").mkdir()
    result = runner.invoke(_app(), ["visualize", str(tmp_path / "empty"), str(out)])
    text = " ".join(result.output.split())
    assert result.exit_code == 1 and "without .jsonl record files" in text and "--engine ray" in text, result.output
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "utterances.jsonl").write_text("{}\n", encoding="utf-8")
    result = runner.invoke(_app(), ["visualize", str(corpus), str(out)])
    text = " ".join(result.output.split())
    assert result.exit_code == 1 and "ConvoKit corpus without annotate records" in text, result.output
    assert "--output-format convokit" in text and not out.exists()


def test_visualize_reads_the_records_of_an_annotated_convokit_corpus(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "utterances.jsonl").write_text("{}\n", encoding="utf-8")
    (corpus / "sp_annotate.records.jsonl").write_text(srsly.json_dumps(_record("k1")) + "\n", encoding="utf-8")
    out = tmp_path / "x.html"
    result = runner.invoke(_app(), ["visualize", str(corpus), str(out)])
    assert result.exit_code == 0, result.output
    assert "k1" in out.read_text(encoding="utf-8")


def test_visualize_bad_input_fails_clearly(tmp_path):
    out = tmp_path / "x.html"
    result = runner.invoke(_app(), ["visualize", str(tmp_path / "missing.spacy"), str(out)])
    assert result.exit_code == 1 and "file not found" in flat(result.output)
    (tmp_path / "a.csv").write_text("x")
    result = runner.invoke(_app(), ["visualize", str(tmp_path / "a.csv"), str(out)])
    assert result.exit_code == 1 and ".jsonl" in flat(result.output)
    (tmp_path / "b.jsonl").write_text('{"pair_id": "ok"\n', encoding="utf-8")
    result = runner.invoke(_app(), ["visualize", str(tmp_path / "b.jsonl"), str(out)])
    assert result.exit_code == 1 and "line 1" in flat(result.output)
    data = _docbin(tmp_path / "pairs.spacy")
    result = runner.invoke(_app(), ["visualize", str(data), str(out), "--sort", "length"])
    assert result.exit_code == 1 and "Unknown sort" in flat(result.output)
    assert runner.invoke(_app(), ["visualize", str(data), str(out), "--limit", "0"]).exit_code == 1
    assert not out.exists()


def test_sort_views_puts_missing_values_last():
    class V:
        def __init__(self, agreement, score):
            self.agreement, self.score = agreement, score

    views = [V(None, None), V(0.5, 0.2), V(0.1, 0.9)]
    assert [v.agreement for v in sort_views(views, "agreement")] == [0.1, 0.5, None]
    assert [v.score for v in sort_views(views, "score")] == [0.9, 0.2, None]
    assert sort_views(views, None) == views


def _margins_docbin(path):
    # Threshold 0.3: margins +0.6, +0.25, +0.01, -0.1 (pair scores 0.9, 0.55, 0.31, 0.2).
    docs = [model_doc(numpy.full(24, p), pair_id=name)
            for name, p in (("clear", 0.9), ("mid", 0.55), ("edge", 0.31), ("below", 0.2))]
    DocBin(docs=docs, store_user_data=True).to_disk(path)
    return path


def test_visualize_sort_margin_puts_borderline_first(tmp_path):
    data = _margins_docbin(tmp_path / "pairs.spacy")
    out = tmp_path / "page.html"
    names = ("clear", "mid", "edge", "below")
    result = runner.invoke(_app(), ["visualize", str(data), str(out), "--sort", "margin"])
    assert result.exit_code == 0, result.output
    assert _order(out.read_text(encoding="utf-8"), names) == ["edge", "below", "mid", "clear"]
    # With --threshold the margins are measured from it: 0.4, 0.05, -0.19, -0.3.
    result = runner.invoke(_app(), ["visualize", str(data), str(out), "--sort", "margin", "--threshold", "0.5"])
    assert result.exit_code == 0, result.output
    assert _order(out.read_text(encoding="utf-8"), names) == ["mid", "edge", "below", "clear"]


def test_sort_views_by_margin_uses_its_size_and_puts_missing_last():
    class V:
        def __init__(self, margin):
            self.margin = margin

    views = [V(None), V(0.3), V(-0.05), V(0.05), V(-0.2)]
    assert [v.margin for v in sort_views(views, "margin")] == [-0.05, 0.05, -0.2, 0.3, None]


@pytest.mark.parametrize("columns", [None, "40"])
def test_visualize_help_names_the_sorts_and_the_shade_scale(columns, monkeypatch):
    if columns is not None:
        monkeypatch.setenv("COLUMNS", columns)  # a narrow terminal the tests may run in
    params = {param.name: param for param in typer.main.get_command(main_app).commands["visualize"].params}
    sort_help = params["sort"].help
    assert "margin (borderline first" in sort_help and "agreement (lowest agreement first; weak today" in sort_help
    assert "page_max" in params["shade_scale"].help
    result = runner.invoke(_app(), ["visualize", "--help"])
    assert result.exit_code == 0 and "--shade-scale" in flat(result.output)


def test_visualize_shade_scale(tmp_path):
    data = _margins_docbin(tmp_path / "pairs.spacy")
    out = tmp_path / "page.html"
    result = runner.invoke(_app(), ["visualize", str(data), str(out), "--shade-scale", "0.5"])
    assert result.exit_code == 0, result.output
    assert "a fixed scale" in out.read_text(encoding="utf-8")
    result = runner.invoke(_app(), ["visualize", str(data), str(out), "--limit", "1", "--sort", "margin",
                                    "--shade-scale", "page_max"])
    assert "p &#247; 0.31, the page" in out.read_text(encoding="utf-8")  # the scale of the pairs shown
    result = runner.invoke(_app(), ["visualize", str(data), str(out)])
    assert "opacity = p, the same on every pair" in out.read_text(encoding="utf-8")  # the default
    out.unlink()
    result = runner.invoke(_app(), ["visualize", str(data), str(out), "--shade-scale", "bright"])
    assert result.exit_code == 1 and "Unknown shade scale" in flat(result.output) and not out.exists()
    result = runner.invoke(_app(), ["visualize", str(data), str(out), "--threshold", "nan"])
    assert result.exit_code == 1 and "finite" in flat(result.output) and not out.exists()


def test_visualize_never_writes_over_its_input(tmp_path):
    """OUTPUT naming the input (the same path, via .., or a hard link) is
    refused and the input is left as it was."""
    import os

    records = tmp_path / "rec.jsonl"
    records.write_text('{"pair_id": "p", "first": {"text": "a"}, "second": {"text": "b"}, "score": 0.5}\n')
    before = records.read_bytes()
    os.link(records, tmp_path / "linked.jsonl")
    (tmp_path / "sub").mkdir()
    for output in (records, tmp_path / "sub" / ".." / "rec.jsonl", tmp_path / "linked.jsonl"):
        result = runner.invoke(_app(), ["visualize", str(records), str(output)])
        assert result.exit_code == 1 and "refusing to write over it" in flat(result.output), result.output
        assert records.read_bytes() == before
