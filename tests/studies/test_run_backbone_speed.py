"""studies.run_backbone_speed on the tests' tiny pipeline saved twice: one
run times every pipeline on the same pairs, rotating the order, and writes
ratios against the first without machine paths."""
import json
import re

import pytest
from spacy.tokens import DocBin

from studies import run_backbone_speed

ABSOLUTE_PATH = re.compile(r'(^|[\s"`(])/[A-Za-z]')


@pytest.fixture(scope="module")
def two_models(trained_pipeline, tmp_path_factory):
    nlp, examples = trained_pipeline
    path = tmp_path_factory.mktemp("backbone_speed")
    (path / "a").mkdir()
    (path / "b").mkdir()
    nlp.to_disk(path / "a" / "model-tuned")
    nlp.to_disk(path / "b" / "model-best")
    (path / "a" / "train_seconds.json").write_text(json.dumps({"seconds": 12.5, "steps": 318}))
    DocBin(docs=[eg.reference for eg in examples] * 2).to_disk(path / "dev.spacy")
    return path


def test_pipelines_timed_in_one_run_against_the_first(two_models, tmp_path):
    output = tmp_path / "speed.json"
    args = [f"small={two_models / 'a' / 'model-tuned'}", f"big={two_models / 'b' / 'model-best'}",
            str(two_models / "dev.spacy"), "--output", str(output), "--repeats", "3", "--threads", "1"]
    assert run_backbone_speed.main(args) == 0
    text = output.read_text()
    r = json.loads(text)
    assert list(r["pipelines"]) == ["small", "big"] and r["n_pairs"] == 8
    small, big = r["pipelines"]["small"], r["pipelines"]["big"]
    for p in (small, big):
        assert len(p["seconds"]) == 3 and p["pairs_per_s"] > 0 and p["pairs_per_cpu_s"] > 0
    assert small["speed_over_small"] == pytest.approx(1.0)
    assert big["speed_over_small"] == pytest.approx(big["pairs_per_s"] / small["pairs_per_s"])
    assert big["cpu_speed_over_small"] == pytest.approx(big["pairs_per_cpu_s"] / small["pairs_per_cpu_s"])
    assert small["train"] == {"seconds": 12.5, "steps": 318} and big["train"] is None
    assert not ABSOLUTE_PATH.search(text), ABSOLUTE_PATH.search(text)


def test_model_arguments_are_checked():
    assert run_backbone_speed.parse_models(["a=x", "b=y"])[1][0] == "b"
    for bad, why in ((["a=x"], "at least two"), (["a=x", "a=y"], "given twice"), (["x", "b=y"], "NAME=MODEL_DIR")):
        with pytest.raises(SystemExit, match=why):
            run_backbone_speed.parse_models(bad)
