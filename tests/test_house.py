"""The house rules a newcomer relies on.

A module is one concept, and its name says which: a newcomer looking for the
record format, the span decoding or the pipeline loader opens the one file
named for it. Its length follows from the concept (spaCy's own components run
300-700 lines); a module is not split to stay short, nor are fragments kept
that only exist because an earlier line limit split a concept. The only
length check left on the code is a smell alarm: a file over ``SMELL_LINES``
lines usually holds more than one concept and should be read for a split
along concept lines, not along line counts.

A package exports only the public API (the names README.md and docs/ show);
code and tests import everything else from the module that defines it.

Also: docs/results.md within 200 lines;
no process words in the docs; every command in its own module of
spacy_paraphrase/cli/, named after it; no command line outside cli/; a
command stops only through ``CommandError`` (``cli/_util.run_command``)."""
import importlib
import re
from pathlib import Path

import typer.main

from spacy_paraphrase.cli import app

ROOT = Path(__file__).resolve().parent.parent
# Not a target: an alarm that a file has grown into more than one concept.
SMELL_LINES = 800


def test_no_file_grown_past_one_concept():
    long = {str(p.relative_to(ROOT)): n for folder in ("spacy_paraphrase", "benchmarks", "scripts", "studies")
            for p in (ROOT / folder).rglob("*.py") if (n := len(p.read_text(encoding="utf-8").splitlines())) > SMELL_LINES}
    assert long == {}, f"over {SMELL_LINES} lines: does each hold one concept? split along concepts, not line counts"


def test_results_md_is_short_and_the_docs_speak_of_the_product():
    assert len((ROOT / "docs" / "results.md").read_text(encoding="utf-8").splitlines()) <= 200
    words = re.compile(r"\b(issues?|sessions?)\b", re.I)
    found = [f"{p.name}:{i}" for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if words.search(line)]
    assert found == []


def _commands(group, prefix=()):
    for name, command in group.commands.items():
        if hasattr(command, "commands"):
            yield from _commands(command, prefix + (name,))
        else:
            yield prefix + (name,), command


def test_every_command_lives_in_the_cli_module_named_after_it():
    placed = {" ".join(name): command.callback.__module__ for name, command in _commands(typer.main.get_command(app))}
    expected = {name: "spacy_paraphrase.cli." + name.split()[0].replace("-", "_") for name in placed}
    assert placed == expected
    assert [p.name for p in (ROOT / "spacy_paraphrase").rglob("cli.py")] == []


def test_commands_stop_through_command_error_only():
    """A command's problems are CommandErrors of its plain function; only run_command prints and exits."""
    stops = re.compile(r"msg\.fail\(|exits=|raise typer\.Exit|sys\.exit\(")
    found = [f"{p.name}:{i}" for p in sorted((ROOT / "spacy_paraphrase" / "cli").glob("*.py")) if p.name != "_util.py"
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if stops.search(line)]
    assert found == []


def test_packages_export_only_the_documented_api():
    documented = set(re.findall(r"\w+", "\n".join(p.read_text(encoding="utf-8")
                                                  for p in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")])))
    packages = ["spacy_paraphrase"] + [f"spacy_paraphrase.{p.parent.name}"
                                       for p in sorted((ROOT / "spacy_paraphrase").glob("*/__init__.py"))]
    undocumented = {}
    for package in packages:
        module = importlib.import_module(package)
        exported = set(getattr(module, "__all__", []))
        assert all(getattr(module, name) is not None for name in exported), package  # each resolves
        undocumented.update({f"{package}.{name}": None for name in sorted(exported - documented)})
    assert undocumented == {}


def test_the_layout_in_docs_architecture_is_the_code_s():
    """docs/architecture.md's layout is generated from the modules (scripts/make_layout.py):
    a module added, removed or renamed without regenerating it fails here."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_layout.py"), "--check"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_every_module_the_docs_name_exists():
    """A newcomer follows `path/module.py` from the docs to the code: each one must be there
    (under spacy_paraphrase/, scripts/, benchmarks/ or tests/; `src/...` names the paper's code)."""
    named = set()
    for doc in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        named.update(re.findall(r"`((?:[a-z_]+/)*[a-z_]+\.py)", doc.read_text(encoding="utf-8")))
    roots = [ROOT, ROOT / "spacy_paraphrase", ROOT / "scripts", ROOT / "benchmarks", ROOT / "tests"]
    missing = {name for name in named if not name.startswith("src/")
               and not any((base / name).is_file() for base in roots)
               and not list((ROOT / "spacy_paraphrase").glob(f"**/{name}"))}
    assert missing == set()
