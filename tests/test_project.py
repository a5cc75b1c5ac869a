"""Smoke run of the project workflow (`spacy project run all`) with a tiny
config, a tiny random BERT and a tiny ContextDeP-format data set, in a copy of
the project so the real outputs are left alone."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import srsly

from tests.util import HEADER, row

ROOT = Path(__file__).resolve().parents[1]


def _tiny_config(src: Path, dst: Path) -> None:
    text = src.read_text()
    for old, new in [
        ("max_epochs = 6", "max_epochs = 2"),
        ("eval_frequency = 27", "eval_frequency = 2"),
        ("total_steps = 318", "total_steps = 8"),
        ("warmup_steps = 50", "warmup_steps = 1"),
    ]:
        assert old in text, old
        text = text.replace(old, new)
    dst.write_text(text)


@pytest.mark.slow
def test_project_workflow_all(tmp_path, tiny_bert):
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "project.yml", project / "project.yml")
    shutil.copytree(ROOT / "configs", project / "configs")
    shutil.copytree(ROOT / "scripts", project / "scripts")
    _tiny_config(project / "configs" / "contextdep_cpu.cfg", project / "configs" / "contextdep_tiny.cfg")
    data = tmp_path / "data" / "contextdep"
    data.mkdir(parents=True)
    rows = []
    for i in range(6):
        rows.append(row(f"Q{i}", "A", i % 2, f"we  won the game {i}", [1, 0, 1, 0, 1, 0] if i % 2 else [0] * 6, f"you won {i}", [0, 1, 0] if i % 2 else [0] * 3))
        rows.append(row(f"Q{i}", "B", 0, f"we  won the game {i}", [0] * 6, f"you won {i}", [0] * 3))
    for split in ("train", "dev"):
        (data / f"{split}.tsv").write_text(HEADER + "".join(rows), encoding="utf-8")
    cmd = [
        sys.executable, "-m", "spacy", "project", "run", "all", str(project),
        "--vars.data_dir", str(tmp_path / "data"),
        "--vars.config", "contextdep_tiny",
        "--vars.backbone", tiny_bert,
        "--vars.package_name", "tiny_paraphrase",
    ]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=1500, cwd=project)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    scores = srsly.read_json(project / "metrics" / "contextdep_tiny_dev.json")
    for key in ["pair_f", "pair_acc", "pair_macro_f", "jaccard_first", "jaccard_second", "jaccard_first_p50", "token_f"]:
        assert f"paraphrase_spans_{key}" in scores
    assert (project / "metrics" / "results_dev.md").read_text().count("|") > 20
    wheels = list((project / "packages").glob("**/*.whl"))
    assert len(wheels) == 1
    meta = srsly.read_json(next((project / "packages").glob("*/meta.json")))
    assert "research use only" in meta["license"]
    assert any("spacy-paraphrase" in req for req in meta["requirements"])
    # the shipped pipeline carries the thresholds tuned on dev and the config's
    # highlight rule; model-best keeps the config's thresholds
    from spacy.util import load_config

    trained_with = load_config(project / "configs" / "contextdep_tiny.cfg")["components"]["paraphrase_spans"]
    tuned = load_config(project / "training" / "contextdep_tiny" / "model-tuned" / "config.cfg")
    best = load_config(project / "training" / "contextdep_tiny" / "model-best" / "config.cfg")
    for key in ("threshold", "highlight_threshold"):
        chosen = srsly.read_json(project / "metrics" / f"contextdep_tiny_{key}.json")["best"]
        assert tuned["components"]["paraphrase_spans"][key] == pytest.approx(chosen)
        assert best["components"]["paraphrase_spans"][key] == trained_with[key]
    assert tuned["components"]["paraphrase_spans"]["highlight_scale"] == trained_with["highlight_scale"]
    wheel_config = next((project / "packages").glob("*/*/*/config.cfg"))
    assert load_config(wheel_config)["components"]["paraphrase_spans"]["highlight_scale"] == trained_with["highlight_scale"]
    cross = srsly.read_json(project / "metrics" / "contextdep_tiny_cross_tuned.json")
    assert cross["folds"] * cross["repeats"] == len(cross["chosen"])
