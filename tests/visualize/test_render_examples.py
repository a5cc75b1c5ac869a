"""scripts/render_examples.py: the stated example-selection rule, and one run
on the tests' tiny trained pipeline and a tiny ContextDeP dev file."""
import importlib.util
import json
import shutil
from pathlib import Path

import pytest
from spacy.tokens import DocBin
from spacy.vocab import Vocab

from spacy_paraphrase.converters.contextdep import convert_contextdep
from tests.util import HEADER, PAIRS, row

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "render_examples.py"
_spec = importlib.util.spec_from_file_location("render_examples", SCRIPT)
render_examples = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(render_examples)
Candidate = render_examples.Candidate
select = render_examples.select_examples


def C(pair_id, k, n, score, margin):
    return Candidate(pair_id, k, n, score, margin)


def test_rule_picks_clear_paraphrase_clear_non_paraphrase_and_borderline():
    pool = [
        C("a", 9, 10, 0.70, 0.40),   # share 0.9, called: score 0.70
        C("b", 8, 10, 0.90, -0.01),  # share 0.8, highest score but not called (margin < 0)
        C("c", 10, 10, 0.70, 0.40),  # ties "a" on the score: "a" wins by pair id
        C("d", 0, 5, 0.20, -0.10),   # share 0: lowest score
        C("e", 0, 5, 0.05, -0.25),   # share 0: the lowest score -> clear non-paraphrase
        C("f", 3, 6, 0.31, 0.01),    # |margin| 0.01, ties "b": "b" wins by pair id
        C("g", 1, 2, 0.0, 0.0),      # share 0.5, |margin| 0 -> borderline
    ]
    chosen = select(pool)
    assert [(c.role, c.pair_id) for c in chosen] == [
        ("a clear paraphrase", "a"), ("a clear non-paraphrase", "e"), ("borderline", "g")]
    assert all(c.fallback == "" for c in chosen)
    # The input order does not matter: ties go by pair id.
    assert [c.pair_id for c in select(list(reversed(pool)))] == ["a", "e", "g"]
    # Without "g", the smallest |margin| is 0.01: "b" and "f" tie, "b" wins by id.
    chosen = select([c for c in pool if c.pair_id != "g"])
    assert chosen[2].pair_id == "b"
    assert [c.pair_id for c in select(list(reversed([c for c in pool if c.pair_id != "g"])))][2] == "b"
    # A share of exactly 0.8 counts as clear.
    assert select(pool + [C("h", 4, 5, 0.95, 0.65)])[0].pair_id == "h"


def test_rule_fallbacks_are_stated():
    pool = [C("a", 8, 10, 0.2, -0.1), C("b", 9, 10, 0.25, -0.05), C("c", 2, 10, 0.1, -0.2),
            C("d", 1, 10, 0.15, -0.15), C("e", 1, 10, 0.12, -0.18)]
    first, second, third = select(pool)
    # The model calls no share >= 0.8 pair a paraphrase: the highest score of them.
    assert (first.pair_id, first.fallback) == ("b", "the model calls no pair with share >= 0.8 a paraphrase")
    # No share-0 pair: of the lowest share (0.1: "d", "e"), the lowest score.
    assert second.pair_id == "e" and "no pair has share 0" in second.fallback
    assert third.pair_id == "a"  # |margin| 0.1 beats 0.15 ("d") and 0.2 ("c")
    with pytest.raises(render_examples.ExampleError, match="at least 3"):
        select(pool[:2])
    with pytest.raises(render_examples.ExampleError, match="share >= 0.8"):
        select([C("x", 1, 10, 0.1, 0.0), C("y", 2, 10, 0.2, 0.1), C("z", 0, 3, 0.1, 0.1)])


def _dev(tmp_path) -> Path:
    """Five pairs: votes 5 of 5, 4 of 5, 0 of 3, 1 of 3, 2 of 4."""
    votes = [(5, 5), (4, 5), (0, 3), (1, 3), (2, 4)]
    text = HEADER
    for p, (k, n) in enumerate(votes):
        first, second, h1, h2 = PAIRS[p % len(PAIRS)]
        for a in range(n):
            yes = a < k
            text += row(f"NPR-{p}-1", f"A{a}", int(yes), " ".join(first),
                        str([int(yes and i in h1) for i in range(len(first))]), " ".join(second),
                        str([int(yes and i in h2) for i in range(len(second))]))
    tsv = tmp_path / "dev.tsv"
    tsv.write_text(text, encoding="utf-8")
    docs, _ = convert_contextdep(tsv, Vocab(), mode="majority")
    path = tmp_path / "dev.spacy"
    DocBin(docs=docs, store_user_data=True).to_disk(path)
    return path


@pytest.fixture
def setup(tmp_path, trained_pipeline):
    nlp, _ = trained_pipeline
    model = tmp_path / "model"
    nlp.to_disk(model)
    docs = tmp_path / "visualize.md"
    docs.write_text(f"# before\n\n{render_examples.START_MARK}\nold\n{render_examples.END_MARK}\n\nafter\n",
                    encoding="utf-8")
    return model, _dev(tmp_path), docs, tmp_path / "images"


def _argv(model, dev, docs, out, *more):
    return ["--model", str(model), "--dev", str(dev), "--docs", str(docs), "--out-dir", str(out), *more]


def test_script_writes_page_json_docs_and_png(setup, capsys, monkeypatch):
    chromium = next((shutil.which(b) for b in render_examples.BROWSERS if shutil.which(b)), None)
    if chromium is None:
        pytest.skip("no Chromium (Debian: apt-get install -y chromium)")
    model, dev, docs, out = setup
    # Relative paths, as `spacy project run` passes them.
    monkeypatch.chdir(out.parent)
    model, dev, docs, out = (Path(p.name) for p in (model, dev, docs, out))
    assert render_examples.main(_argv(model, dev, docs, out, "--width", "900")) == 0
    png = (out / "render_example.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    summary = json.loads((out / "render_examples.json").read_text(encoding="utf-8"))
    assert summary["n_pairs"] == 5 and "a clear paraphrase" in summary["rule"]
    roles = [e["role"] for e in summary["examples"]]
    assert roles == ["a clear paraphrase", "a clear non-paraphrase", "borderline"]
    first = summary["examples"][0]
    assert first["annotators"]["share"] >= 0.8
    assert summary["examples"][1]["annotators"]["paraphrase"] == 0
    for e in summary["examples"]:
        assert e["threshold"] == pytest.approx(e["pair_score"] - e["margin"], abs=1e-3)
        assert e["is_paraphrase"] == (e["margin"] >= 0)
    page = (out / "render_example.html").read_text(encoding="utf-8")
    assert page.count('class="spp-pair"') == 3 and "example: a clear paraphrase" in page
    assert "&#8594; paraphrase" in page  # the legend's decision rule
    text = docs.read_text(encoding="utf-8")
    assert text.startswith("# before\n\n") and text.endswith("\n\nafter\n") and "\nold\n" not in text
    assert text.count("| a clear") == 2 and "| borderline |" in text
    assert "borderline:" in capsys.readouterr().out
    # Rerunning gives the same outputs (the rule and the page are deterministic).
    def outputs():
        return [(out / name).read_text(encoding="utf-8") for name in ("render_examples.json", "render_example.html")] \
            + [docs.read_text(encoding="utf-8")]

    before = outputs()
    assert render_examples.main(_argv(model, dev, docs, out, "--width", "900")) == 0
    assert outputs() == before


def test_script_fails_clearly_without_chromium_or_inputs(setup, capsys, tmp_path, monkeypatch):
    model, dev, docs, out = setup
    rc = render_examples.main(_argv(model, dev, docs, out, "--chromium", str(tmp_path / "no-chromium")))
    err = capsys.readouterr().err
    assert rc == 1 and "Chromium not found" in err and "Traceback" not in err
    assert not out.exists()  # nothing written
    monkeypatch.setattr(render_examples.shutil, "which", lambda name: None)
    assert render_examples.main(_argv(model, dev, docs, out)) == 1
    assert "apt-get install -y chromium" in capsys.readouterr().err
    monkeypatch.undo()
    assert render_examples.main(_argv(tmp_path / "nope", dev, docs, out)) == 1
    assert "No pipeline at" in capsys.readouterr().err
    assert render_examples.main(_argv(model, tmp_path / "nope.spacy", docs, out)) == 1
    assert "convert contextdep" in capsys.readouterr().err
    (tmp_path / "plain.md").write_text("no markers\n", encoding="utf-8")
    assert render_examples.main(_argv(model, dev, tmp_path / "plain.md", out, "--chromium", shutil.which("true") or "/bin/true")) == 1
    assert "markers" in capsys.readouterr().err
