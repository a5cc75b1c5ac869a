"""Every command the README and docs/ show runs as written, as far as can be
checked without running it: each `python -m spacy_paraphrase ...` in a code
block parses with the command line's own parser (the command, its options and
their values exist), every `python -m MODULE` names a module of the repository,
every `spacy project run NAME` a command or workflow of project.yml, and every
repository path a command reads is in the repository, written by a
project.yml command, or written by an earlier command of the same block."""
import importlib.util
import re
from pathlib import Path
from typing import List

import pytest
import srsly
import typer
from typer._click import exceptions as click_errors

from tests.docs_blocks import (REPO_DIRS, ROOT, documented, input_paths, is_group, is_placeholder,
                               python_module, synopsis_words)


def project_outputs() -> List[re.Pattern]:
    """The outputs of project.yml's commands, a ``${vars.x}`` matching any value (`--vars.x` sets it)."""
    project = srsly.read_yaml(ROOT / "project.yml")
    outs = []
    for command in project.get("commands", []):
        for output in command.get("outputs", []):
            parts = re.split(r"\$\{vars\.\w+\}", output)
            outs.append(re.compile("[^/]*".join(map(re.escape, parts)) + "(/.*)?"))
    return outs


CLI_CALLS = [(f, w[3:]) for f, w, _ in documented() if python_module(w)[0] == "spacy_paraphrase"]


def test_the_docs_show_commands():
    assert len(CLI_CALLS) > 30
    assert {args[0] for _, args in CLI_CALLS if args} >= {"annotate", "evaluate", "tune", "visualize",
                                                          "convert", "quantize", "backbone"}


@pytest.mark.parametrize("where,args", CLI_CALLS, ids=[f"{f}:{' '.join(a[:2])}" for f, a in CLI_CALLS])
def test_each_documented_command_line_parses(where, args):
    from spacy_paraphrase.cli import app

    command = typer.main.get_command(app)
    # the parser checks the command, its options and their values (no option of the package's commands
    # checks that a path exists, so parsing needs none of the files)
    ctx = command.make_context("spacy-paraphrase", [], resilient_parsing=True)
    cmd, sub_args = command, synopsis_words(args)
    while is_group(cmd) and sub_args and not sub_args[0].startswith("-"):
        name = sub_args.pop(0)
        if re.fullmatch(r"<\w+>|[A-Z]+", name):  # a synopsis: `convert <format> ...`, `COMMAND --help`
            return
        nxt = cmd.get_command(ctx, name)
        assert nxt is not None, f"{where}: no command {name!r} in `spacy_paraphrase {' '.join(args)}`"
        cmd = nxt
    if "--help" in sub_args or not args:
        return
    try:
        cmd.make_context(cmd.name, sub_args)
    except click_errors.UsageError as err:
        pytest.fail(f"{where}: `python -m spacy_paraphrase {' '.join(args)}` does not parse: {err.format_message()}")


def test_documented_modules_exist():
    missing = []
    for where, words, _ in documented():
        module, _args = python_module(words)
        if not module or module in ("spacy", "pytest", "pip", "venv", "http.server", "json.tool"):
            continue
        if module.startswith(("benchmarks.", "studies.", "scripts.", "spacy_paraphrase")):
            if importlib.util.find_spec(module.split(" ")[0]) is None:
                missing.append((where, module))
    assert not missing, missing


def test_documented_project_commands_exist():
    project = srsly.read_yaml(ROOT / "project.yml")
    names = {c["name"] for c in project["commands"]} | set(project.get("workflows", {}))
    unknown = []
    for where, words, _ in documented():
        module, args = python_module(words)
        if module == "spacy":
            words = ["spacy", *args]
        if words[:3] == ["spacy", "project", "run"] and len(words) > 3 and not is_placeholder(words[3]):
            if words[3] not in names:
                unknown.append((where, words[3]))
    assert not unknown, unknown


def test_documented_paths_exist_or_are_written_first():
    """A repository path a command reads (training/..., corpus/..., configs/...) exists, is under a
    project.yml output, or is written by an earlier command of the same block."""
    outputs = project_outputs()
    missing, seen = [], 0
    for where, words, earlier in documented():
        module, args = python_module(words)
        if module != "spacy_paraphrase":
            continue
        written_before = {w.rstrip("/") for cmd in earlier for w in cmd}
        for path in input_paths(args):
            path = path.split("=", 1)[-1].rstrip("/")
            if not path.startswith(REPO_DIRS) or is_placeholder(path):
                continue
            seen += 1
            if (ROOT / path).exists() or path in written_before or any(out.fullmatch(path) for out in outputs):
                continue
            missing.append((where, " ".join(words[:4]), path))
    assert seen > 10
    assert not missing, missing
