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

The modules import in one direction: no import circle between two modules,
and no loop between folders (a subpackage, or a module at the top of the
package) even through an import inside a function, which would only hide it.

Also: docs/results.md within 200 lines;
no process words in the docs; every command in its own module of
spacy_paraphrase/cli/, named after it; no command line outside cli/; a
command stops only through ``CommandError`` (``cli/_util.run_command``)."""
import ast
import importlib
import re
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest
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


PACKAGE = "spacy_paraphrase"


def _modules() -> Dict[str, Tuple[Path, bool]]:
    """Every module of the package by dotted name: (file, is a package's ``__init__``)."""
    out = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return out


def _imported(node, name: str, is_package: bool, modules) -> List[str]:
    """The package's modules an ``import`` / ``from ... import`` statement of module ``name`` names."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name in modules]
    if node.level:
        base = name.split(".") if is_package else name.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    return list(dict.fromkeys(f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                              for alias in node.names if f"{source}.{alias.name}" in modules or source in modules))


def package_imports() -> List[Tuple[str, str, bool, int]]:
    """(importer, imported, inside a function, line) for every import of one
    of the package's modules by another, read with ``ast`` (nothing is run)."""
    modules = _modules()
    found = []

    def visit(node, name, is_package, late):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.extend((name, target, late, child.lineno)
                             for target in _imported(child, name, is_package, modules) if target != name)
            visit(child, name, is_package,
                  late or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    for name, (path, is_package) in modules.items():
        visit(ast.parse(path.read_text(encoding="utf-8")), name, is_package, False)
    return found


def folder_of(module: str) -> str:
    """A module's folder: its subpackage (``spacy_paraphrase.encoder``), or the
    module itself when it lies at the top of the package (``spacy_paraphrase.pair_doc``)."""
    parts = module.split(".")
    return module if len(parts) <= 2 else ".".join(parts[:2])


def loops(edges: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected groups of more than one node (Tarjan), each sorted."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    out: List[List[str]] = []

    def connect(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                group.append(stack.pop())
                if group[-1] == node:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            connect(node)
    return sorted(out)


def _explain(group: List[str], imports, key) -> List[str]:
    members = set(group)
    return list(dict.fromkeys(f"{a}:{line} -> {b}{' (inside a function)' if late else ''}" for a, b, late, line in imports
                              if key(a) != key(b) and key(a) in members and key(b) in members))


def test_no_import_circle_between_modules():
    """A module never imports, even inside a function, a module that imports it back
    (directly or around a circle): what both need belongs in one of them, or beside
    their callers."""
    imports = package_imports()
    edges: Dict[str, Set[str]] = {}
    for a, b, _, _ in imports:
        edges.setdefault(a, set()).add(b)
    circles = loops(edges)
    assert circles == [], "\n".join(line for group in circles for line in _explain(group, imports, lambda m: m))


def test_no_folder_loop_even_through_imports_inside_functions():
    """Folders (subpackages, and each module at the top of the package) import
    in one direction. An import inside a function counts: a late import that
    closes a loop only hides it. The package's own ``__init__`` (the public
    API, imported lazily) is left out."""
    imports = [i for i in package_imports() if PACKAGE not in (i[0], i[1])]
    edges: Dict[str, Set[str]] = {}
    for a, b, _, _ in imports:
        if folder_of(a) != folder_of(b):
            edges.setdefault(folder_of(a), set()).add(folder_of(b))
    found = loops(edges)
    assert found == [], "\n".join(line for group in found for line in _explain(group, imports, folder_of))


def test_the_import_checks_see_circles_and_late_imports(tmp_path, monkeypatch):
    """The two checks above fail on a circle closed inside a function and on a
    folder loop closed by a late import (a package made up for the purpose)."""
    package = tmp_path / PACKAGE
    for folder, files in {"a": {"x.py": "from ..b.y import f\n", "z.py": "def g():\n    from . import x\n"},
                          "b": {"y.py": "def f():\n    from ..a import z\n    from spacy_paraphrase.a.x import q\n"}}.items():
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("")
        for name, text in files.items():
            (package / folder / name).write_text(text)
    (package / "__init__.py").write_text("")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert ("spacy_paraphrase.b.y", "spacy_paraphrase.a.z", True, 2) in package_imports()
    assert ("spacy_paraphrase.a.z", "spacy_paraphrase.a.x", True, 2) in package_imports()
    with pytest.raises(AssertionError, match=r"a\.x:1 -> spacy_paraphrase\.b\.y"):
        test_no_import_circle_between_modules()
    with pytest.raises(AssertionError, match=r"b\.y:2 -> spacy_paraphrase\.a\.z \(inside a function\)"):
        test_no_folder_loop_even_through_imports_inside_functions()
