"""What the README and docs/ show: their shell commands and python blocks, as the docs tests
(test_docs_commands.py parses them, test_docs_run.py runs them) read them."""
import re
import shlex
from pathlib import Path
from typing import Iterator, List, Tuple

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# the first parts of repository paths a command may read
REPO_DIRS = ("training/", "corpus/", "configs/", "metrics/", "packages/", "assets/", "docs/", "scripts/")


def fenced_blocks(path: Path) -> List[Tuple[str, str]]:
    """(language, text) of every fenced block of a markdown file."""
    return re.findall(r"^```(\w*)\n(.*?)^```", path.read_text(encoding="utf-8"), flags=re.S | re.M)


def code_blocks(path: Path) -> Iterator[str]:
    for lang, block in fenced_blocks(path):
        if lang in ("bash", "sh", "console", "shell", ""):
            yield block


def python_blocks(path: Path) -> List[str]:
    return [block for lang, block in fenced_blocks(path) if lang == "python"]


def first_alternatives(text: str) -> str:
    """A synopsis's alternatives inside brackets (`[--sort margin|agreement|score]`): the first."""
    return re.sub(r"\[([^\[\]\n]*)\]", lambda m: "[" + re.split(r"\s*\\?\|\s*", m.group(1))[0] + "]", text)


def commands(block: str) -> Iterator[List[str]]:
    """The simple commands of a shell block (continuations joined, split at && ; | and newlines)."""
    text = first_alternatives(re.sub(r"\\\n\s*", " ", block))
    text = text.replace("\\|", "|")
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
            if words and words[-1] == "&":  # run in the background
                words = words[:-1]
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


def synopsis_words(args: List[str]) -> List[str]:
    """A synopsis as a command line: optional parts `[--opt VALUE]` taken, `[options]` dropped, a
    number placeholder (N, K, T) given a number."""
    out = []
    for word in args:
        if word in ("[options]", "[OPTIONS]", "..."):
            continue
        word = word.strip("[]")
        out.append("1" if re.fullmatch(r"[NKT]", word) else word)
    return out


def is_group(cmd) -> bool:
    return hasattr(cmd, "get_command") and hasattr(cmd, "list_commands")


def is_placeholder(word: str) -> bool:
    return bool(re.search(r"[A-Z]{3,}|<|\.\.\.|\*|\$|\{", word))


OUTPUT_PARAMS = re.compile(r"output|save|errors|^out")


def input_paths(args: List[str]) -> List[str]:
    """The values the parser gives the command's parameters that are not outputs."""
    import typer

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
