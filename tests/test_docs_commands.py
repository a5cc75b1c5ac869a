"""Every command the README and docs/ show runs as written, as far as can be
checked without running it: each `python -m spacy_paraphrase ...` in a code
block parses with the command line's own parser (the command, its options and
their values exist), every `python -m MODULE` names a module of the repository,
every `spacy project run NAME` a command or workflow of project.yml, and every
repository path a command reads is in the repository, written by a
project.yml command, or written by an earlier command of the same block."""
import importlib.util
import re
import shlex
from pathlib import Path
from typing import Iterator, List, Set, Tuple

import pytest
import srsly
import typer
from typer._click import exceptions as click_errors

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# the first parts of repository paths a command may read
REPO_DIRS = ("training/", "corpus/", "configs/", "metrics/", "packages/", "assets/", "docs/", "scripts/")


def code_blocks(path: Path) -> Iterator[str]:
    for lang, block in re.findall(r"^```(\w*)\n(.*?)^```", path.read_text(encoding="utf-8"), flags=re.S | re.M):
        if lang in ("bash", "sh", "console", "shell", ""):
            yield block


def commands(block: str) -> Iterator[List[str]]:
    """The simple commands of a shell block (continuations joined, split at && ; | and newlines)."""
    text = re.sub(r"\\\n\s*", " ", block).replace("\\|", "|")
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        line = re.sub(r"^\$\s+", "", line)
        for part in re.split(r"\s*(?:&&|\|\||;|\|)\s*", line):
            try:
                words = shlex.split(part, comments=True)
            except ValueError:
                continue
            while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):  # VAR=value prefixes
                words = words[1:]
            if words:
                yield words


def python_module(words: List[str]) -> Tuple[str, List[str]]:
    """(module, args) of `python -m module args` (any python path), else ("", [])."""
    if len(words) >= 3 and Path(words[0]).name.startswith("python") and words[1] == "-m":
        return words[2], words[3:]
    return "", []


def inline_commands(path: Path) -> Iterator[str]:
    """Commands shown inline in the prose: `python -m ...`, `spacy project run ...`."""
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)
    for span in re.findall(r"`([^`\n]+)`", text.replace("\n", " ").replace("` `", " ")):
        if re.match(r"(\.venv/bin/)?python -m \w|spacy project run ", span):
            # a synopsis's alternatives (`lexical\|always DIR`, `[--save \| --save-to DIR]`): the first
            yield re.sub(r"\s*\\?\|\s*(-[^\s\]]+(\s+[A-Z][A-Z_.]*)?|[^\s\]]+)", "", span)


def documented() -> List[Tuple[str, List[str], List[List[str]]]]:
    """(file, command words, the earlier commands of its block) for every command shown."""
    out = []
    for path in DOCS:
        where = str(path.relative_to(ROOT))
        for block in [*code_blocks(path), *inline_commands(path)]:
            earlier: List[List[str]] = []
            for words in commands(block):
                out.append((where, words, list(earlier)))
                earlier.append(words)
    return out


def project_outputs() -> List[re.Pattern]:
    """The outputs of project.yml's commands, a ``${vars.x}`` matching any value (`--vars.x` sets it)."""
    project = srsly.read_yaml(ROOT / "project.yml")
    outs = []
    for command in project.get("commands", []):
        for output in command.get("outputs", []):
            parts = re.split(r"\$\{vars\.\w+\}", output)
            outs.append(re.compile("[^/]*".join(map(re.escape, parts)) + "(/.*)?"))
    return outs


def synopsis_words(args: List[str]) -> List[str]:
    """A synopsis as a command line: optional parts `[--opt VALUE]` taken, `[options]` dropped, a
    number placeholder (N, K) given a number."""
    out = []
    for word in args:
        if word in ("[options]", "[OPTIONS]", "..."):
            continue
        word = word.strip("[]")
        out.append("1" if re.fullmatch(r"[NK]", word) else word)
    return out


def is_group(cmd) -> bool:
    return hasattr(cmd, "get_command") and hasattr(cmd, "list_commands")


def is_placeholder(word: str) -> bool:
    return bool(re.search(r"[A-Z]{3,}|<|\.\.\.|\*|\$|\{", word))


CLI_CALLS = [(f, w[3:]) for f, w, _ in documented() if python_module(w)[0] == "spacy_paraphrase"]


def test_the_docs_show_commands():
    assert len(CLI_CALLS) > 30
    assert {args[0] for _, args in CLI_CALLS if args} >= {"annotate", "evaluate", "find-threshold", "visualize",
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


OUTPUT_PARAMS = re.compile(r"output|save|errors|^out")


def input_paths(args: List[str]) -> List[str]:
    """The values the parser gives the command's parameters that are not outputs."""
    from spacy_paraphrase.cli import app

    cmd = typer.main.get_command(app)
    ctx = cmd.make_context("spacy-paraphrase", [], resilient_parsing=True)
    args = list(args)
    while is_group(cmd) and args and not args[0].startswith("-"):
        cmd = cmd.get_command(ctx, args.pop(0))
        if cmd is None:
            return []
    if "--help" in args:
        return []
    parsed = cmd.make_context(cmd.name, synopsis_words(args), resilient_parsing=True).params
    values = []
    for name, value in parsed.items():
        if OUTPUT_PARAMS.search(name):
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, (str, Path)):
                values.append(str(item))
    return values


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
