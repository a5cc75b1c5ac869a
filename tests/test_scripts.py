"""scripts/timed.py and scripts/when_present.py run the command after their
``--`` with the interpreter that runs the project, as spaCy's project runner
does for a step's first word: a project step works from a PATH whose
``python`` is not the venv's (issue: `.venv/bin/python -m spacy project run`
without activating the venv)."""
import os
import subprocess
import sys
from pathlib import Path

import srsly

ROOT = Path(__file__).resolve().parent.parent


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "scripts").mkdir(parents=True)
    for name in ("timed.py", "when_present.py", "subcommand.py"):
        (project / "scripts" / name).write_bytes((ROOT / "scripts" / name).read_bytes())
    (project / "present.txt").write_text("here\n")
    probe = "import spacy_paraphrase, sys, pathlib; pathlib.Path(sys.argv[1]).write_text(sys.executable)"
    srsly.write_yaml(project / "project.yml", {
        "commands": [{"name": "steps", "script": [
            f"python scripts/when_present.py present.txt -- python -c \"{probe}\" ran_present.txt",
            f"python scripts/when_present.py absent.txt -- python -c \"{probe}\" ran_absent.txt",
            f"python scripts/timed.py timed.json -- python -c \"{probe}\" ran_timed.txt",
        ]}],
    })
    return project


def test_project_steps_run_the_package_with_the_projects_interpreter(tmp_path):
    """PATH's `python` / `python3` are decoys that fail: each step still runs
    the package with the interpreter that runs `spacy project run`."""
    project = _project(tmp_path)
    decoys = tmp_path / "bin"
    decoys.mkdir()
    for name in ("python", "python3"):
        decoy = decoys / name
        decoy.write_text("#!/bin/sh\necho decoy python >&2\nexit 97\n")
        decoy.chmod(0o755)
    env = {"PATH": f"{decoys}{os.pathsep}/usr/bin{os.pathsep}/bin", "HOME": os.environ.get("HOME", str(tmp_path))}
    result = subprocess.run([sys.executable, "-m", "spacy", "project", "run", "steps", str(project)],
                            capture_output=True, text=True, cwd=project, env=env, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert (project / "ran_present.txt").read_text() == sys.executable
    assert (project / "ran_timed.txt").read_text() == sys.executable
    assert not (project / "ran_absent.txt").exists()
    assert "absent.txt not found: skipped" in result.stdout
    assert srsly.read_json(project / "timed.json")["seconds"] >= 0


def test_a_failing_command_fails_the_step(tmp_path):
    """The wrapped command's exit code is the script's (timed.py writes no time then)."""
    for script, args in (("when_present.py", ["present.txt"]), ("timed.py", ["t.json"])):
        project = _project(tmp_path / script)
        result = subprocess.run([sys.executable, str(project / "scripts" / script), *args, "--", "python", "-c",
                                 "raise SystemExit(3)"], cwd=project, capture_output=True, text=True)
        assert result.returncode == 3, (script, result.stderr)
    assert not (tmp_path / "timed.py" / "project" / "t.json").exists()
