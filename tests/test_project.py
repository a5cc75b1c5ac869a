"""Smoke run of the project workflow (`spacy project run all`) with a tiny
config, a tiny random BERT and a tiny ContextDeP-format data set, in a copy of
the project so the real outputs are left alone; then the wheels it ships
(spacy-paraphrase's own and the model's) are installed into a fresh virtual
environment and used from outside the repository, by package name."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional, Sequence

import pytest
import srsly

from tests.util import HEADER, row

ROOT = Path(__file__).resolve().parents[1]


def _tiny_config(src: Path, dst: Path, backbone: Path) -> None:
    """The shipped recipe made tiny: fewer steps, and the tiny backbone in
    place of the config's own (the project's train command takes the model
    name from the config)."""
    text = src.read_text()
    for old, new in [
        ('name = "sentence-transformers/all-MiniLM-L6-v2"', f"name = {json.dumps(str(backbone))}"),
        ("max_epochs = 6", "max_epochs = 2"),
        ("eval_frequency = 27", "eval_frequency = 2"),
        ("total_steps = 318", "total_steps = 8"),
        ("warmup_steps = 50", "warmup_steps = 1"),
    ]:
        assert old in text, old
        text = text.replace(old, new)
    dst.write_text(text)


# Run with the fresh environment's python, from a directory outside the repo:
# load the model wheel by package name, annotate one pair, print JSON.
LOAD_SCRIPT = """
import importlib.util, json, sys, sysconfig
import spacy, spacy_paraphrase
name = sys.argv[1]
nlp = spacy.load(name)
doc = spacy_paraphrase.make_pair_doc(nlp, "we won the game yesterday", "you won it", speakers=("GUEST", "HOST"))
doc = nlp(doc)
group = doc.spans["paraphrase"]
print(json.dumps({
    "spacy_paraphrase": spacy_paraphrase.__file__,
    "model": importlib.util.find_spec(name).origin,
    "site_packages": sysconfig.get_paths()["purelib"],
    "n_tokens": len(doc),
    "pair_score": float(group.attrs["pair_score"]),
    "vote_share": float(group.attrs["vote_share"]),
    "cfg": nlp.get_pipe("paraphrase_spans").cfg,
    "cats": doc.cats,
    "token_probs": [float(p) for p in spacy_paraphrase.token_probs(doc)],
    "spans": [[span.label_, span.start, span.end, span.text] for span in group],
}))
"""

CHAT = [
    {"id": "c1", "messages": [{"role": "user", "content": "We won the game."}, {"role": "assistant", "content": "You won it?"}]},
    {"id": "c2", "messages": [{"role": "user", "content": "Is it far?"}, {"role": "assistant", "content": "About 3 km."}]},
]


def _tail(text, n: int = 4000) -> str:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return (text or "")[-n:]


def _run(cmd: Sequence, what: str, timeout: int, *, expect_ok: bool = True, cwd: Optional[Path] = None,
         env: Optional[dict] = None) -> subprocess.CompletedProcess:
    """Run ``cmd``; fail the test with the tail of its output when it times
    out or (with ``expect_ok``) exits with an error."""
    cmd = [str(part) for part in cmd]
    try:
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)
    except subprocess.TimeoutExpired as err:
        pytest.fail(f"{what}: no result after {timeout}s\n$ {' '.join(cmd)}\n"
                    f"--- stdout (tail)\n{_tail(err.stdout)}\n--- stderr (tail)\n{_tail(err.stderr)}")
    if expect_ok and result.returncode != 0:
        pytest.fail(f"{what} failed (exit {result.returncode})\n$ {' '.join(cmd)}\n"
                    f"--- stdout (tail)\n{_tail(result.stdout)}\n--- stderr (tail)\n{_tail(result.stderr)}")
    return result


def _fresh_env(venv: Path) -> dict:
    """The environment for the fresh venv's python: nothing of this one's
    (no PYTHONPATH, no VIRTUAL_ENV), no user site, no model downloads."""
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", VIRTUAL_ENV=str(venv), PYTHONNOUSERSITE="1",
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return env


def _build_package_wheel(work: Path) -> Path:
    """spacy-paraphrase's own wheel (a normal, not editable, build), built from
    a copy of the sources so the build leaves nothing in the checkout."""
    src = work / "src"
    src.mkdir(parents=True)
    for name in ("pyproject.toml", "setup.cfg", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "spacy_paraphrase", src / "spacy_paraphrase",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", work / "dist", src], "building the spacy-paraphrase wheel", 900)
    wheels = list((work / "dist").glob("spacy_paraphrase-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def _fresh_venv(work: Path):
    """A fresh venv in ``work`` (no system site-packages) with the pinned CPU
    torch, its environment and a folder outside the repository to run in:
    (venv, python, env, outside)."""
    venv = work / "venv"
    _run([sys.executable, "-m", "venv", venv], "creating the venv", 300)
    python = venv / "bin" / "python"
    env = _fresh_env(venv)
    outside = work / "outside"
    outside.mkdir()
    # torch first and pinned (the CPU wheel): a loose requirement could pull a multi-GB CUDA build
    _run([python, "-m", "pip", "install", "--no-input", "torch==2.13.0"],
         "pip install torch==2.13.0 into the fresh venv", 1800, env=env, cwd=outside)
    return venv, python, env, outside


def _check_wheels_install_anywhere(work: Path, model_wheel: Path, package: str) -> None:
    """Both wheels in a fresh venv (no system site-packages): the model loads
    by package name from outside the repo, annotates a pair, and the
    ``annotate`` command runs on a chat file. Without the model wheel the
    load by name fails (so the check cannot pass on anything else)."""
    package_wheel = _build_package_wheel(work / "build")
    venv, python, env, outside = _fresh_venv(work)
    pip = [python, "-m", "pip", "install", "--no-input"]
    _run(pip + [package_wheel], "pip install the spacy-paraphrase wheel (and its dependencies)", 2400, env=env, cwd=outside)
    script = outside / "load_model.py"
    script.write_text(LOAD_SCRIPT, encoding="utf-8")
    missing = _run([python, script, package], "loading the model before its wheel is installed", 600,
                   expect_ok=False, env=env, cwd=outside)
    assert missing.returncode != 0 and "E050" in missing.stderr, _tail(missing.stdout) + _tail(missing.stderr)
    _run(pip + [model_wheel], "pip install the model wheel", 900, env=env, cwd=outside)
    listed = _run([python, "-m", "pip", "list", "--format", "json"], "pip list", 300, env=env, cwd=outside)
    versions = {row["name"].lower().replace("_", "-"): row["version"] for row in json.loads(listed.stdout)}
    assert versions["torch"].startswith("2.13.0"), versions
    assert tuple(int(part) for part in versions["transformers"].split(".")[:3]) < (4, 53, 3), versions
    assert "spacy-paraphrase" in versions and package.replace("_", "-") in versions, versions

    result = _run([python, script, package], f"spacy.load({package!r}) in the fresh venv", 600, env=env, cwd=outside)
    out = json.loads(result.stdout.strip().splitlines()[-1])
    site = Path(out["site_packages"]).resolve()
    for key in ("spacy_paraphrase", "model"):
        where = Path(out[key]).resolve()
        assert site in where.parents and ROOT not in where.parents, (key, where, site)
    assert site.is_relative_to(venv.resolve())
    assert isinstance(out["pair_score"], float) and 0.0 <= out["pair_score"] <= 1.0, out
    assert out["cats"]["PARAPHRASE"] == pytest.approx(out["pair_score"])
    # the wheel ships the vote-share map fitted on dev, and the pipeline applies it
    assert out["cfg"]["vote_share_map"] and out["cfg"]["vote_share_map"]["features"]
    assert 0.0 < out["vote_share"] < 1.0 and out["vote_share"] != out["pair_score"]
    assert len(out["token_probs"]) == out["n_tokens"] > 0
    assert all(0.0 <= p <= 1.0 for p in out["token_probs"]), out["token_probs"]
    for label, start, end, text in out["spans"]:
        assert label in ("SOURCE", "PARAPHRASE") and 0 <= start < end <= out["n_tokens"] and text

    chat = outside / "chat.jsonl"
    srsly.write_jsonl(chat, CHAT)
    _run([python, "-m", "spacy_paraphrase", "annotate", package, chat, outside / "out.jsonl", "--no-count"],
         f"annotate with {package!r} in the fresh venv", 600, env=env, cwd=outside)
    records = list(srsly.read_jsonl(outside / "out.jsonl"))
    assert [(r["conversation_id"], r["first"]["text"], r["second"]["text"]) for r in records] == [
        ("c1", "We won the game.", "You won it?"), ("c2", "Is it far?", "About 3 km.")
    ]
    for record in records:
        assert isinstance(record["score"], float) and 0.0 <= record["score"] <= 1.0, record
    errors = outside / "out.jsonl.errors.jsonl"
    assert not errors.exists() or not errors.read_text().strip(), errors.read_text()


@pytest.mark.slow
def test_project_workflow_all(tmp_path, tiny_bert):
    # a copy of the backbone, deleted before the wheels are used: the model
    # wheel must carry its transformer, not point at this directory
    backbone = tmp_path / "backbone"
    shutil.copytree(tiny_bert, backbone)
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "project.yml", project / "project.yml")
    shutil.copytree(ROOT / "configs", project / "configs")
    shutil.copytree(ROOT / "scripts", project / "scripts")
    # the workflow's table writers run as `python -m benchmarks.<module>` from the project
    shutil.copytree(ROOT / "benchmarks", project / "benchmarks", ignore=shutil.ignore_patterns("__pycache__", "results"))
    _tiny_config(project / "configs" / "contextdep_minilm_cpu.cfg", project / "configs" / "contextdep_tiny.cfg", backbone)
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
        "--vars.package_name", "tiny_paraphrase",
    ]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=1500, cwd=project)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    scores = srsly.read_json(project / "metrics" / "contextdep_tiny_dev.json")
    for key in ["pair_f", "pair_acc", "pair_macro_f", "jaccard_first", "jaccard_second", "jaccard_first_abs50", "token_f",
                "paper_pair_f", "paper_pair_p", "paper_pair_r", "paper_jaccard_first_n", "paper_jaccard_second_n"]:
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
    chosen = {"threshold": srsly.read_json(project / "metrics" / "contextdep_tiny_threshold.json")["best"]}
    # the span decoding step tunes the highlight threshold again with the decoding settings
    chosen.update(srsly.read_json(project / "metrics" / "contextdep_tiny_decoding.json")["best"])
    chosen.update(srsly.read_json(project / "metrics" / "contextdep_tiny_vote_share.json")["best"])
    assert set(chosen) == {"threshold", "highlight_threshold", "max_gap", "trim_edges", "min_span_length",
                           "max_spans", "vote_share_map"}
    for key, value in chosen.items():
        saved = tuned["components"]["paraphrase_spans"][key]
        if key == "vote_share_map":  # floats written with fewer digits to the JSON
            assert saved["features"] == value["features"]
            assert saved["coef"] + [saved["intercept"]] == pytest.approx(value["coef"] + [value["intercept"]])
        else:
            assert saved == pytest.approx(value)
        assert best["components"]["paraphrase_spans"][key] == trained_with[key]
    assert tuned["components"]["paraphrase_spans"]["vote_share_map"]["features"]
    assert tuned["components"]["paraphrase_spans"]["highlight_scale"] == trained_with["highlight_scale"]
    wheel_config = next((project / "packages").glob("*/*/*/config.cfg"))
    assert load_config(wheel_config)["components"]["paraphrase_spans"]["highlight_scale"] == trained_with["highlight_scale"]
    cross = srsly.read_json(project / "metrics" / "contextdep_tiny_cross_tuned.json")
    assert cross["folds"] * cross["repeats"] == len(cross["chosen"])
    shutil.rmtree(backbone)
    package = f"{meta['lang']}_{meta['name']}"
    _check_wheels_install_anywhere(tmp_path / "install", wheels[0], package)
