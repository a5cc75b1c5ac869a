"""README.md and docs/api.md: the README stays short with the two commands on
top, the reference tables live in docs/api.md, every link and every
'README, "Section"' reference in the code and docs points at something that
exists, and the README's offline snippet runs as written."""
import configparser
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
API = ROOT / "docs" / "api.md"
MAX_README_LINES = 250
TOP_COMMANDS = [
    "bash scripts/setup.sh && . .venv/bin/activate && python -m spacy project run all . --vars.data_dir ../shared/data",
    'bash scripts/setup.sh && .venv/bin/python -m pytest -q -rs -m "slow or not slow" tests',
]


def _without_code(text: str) -> str:
    """The text with fenced code blocks blanked (a `#` in a code block is no heading)."""
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def _anchors(path: Path) -> set:
    """GitHub's anchors for the headings of a Markdown file."""
    anchors = set()
    for line in _without_code(path.read_text(encoding="utf-8")).splitlines():
        match = re.match(r"#{1,6}\s+(.*)", line)
        if match:
            slug = re.sub(r"[^\w\- ]", "", match.group(1).strip().lower()).replace(" ", "-")
            anchors.add(slug)
    return anchors


def _headings(path: Path) -> list:
    return [line.lstrip("#").strip() for line in _without_code(path.read_text(encoding="utf-8")).splitlines()
            if line.startswith("#")]


def test_readme_is_short_and_starts_with_the_two_commands():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, len(lines)
    assert lines[0] == "# spacy-paraphrase"
    assert lines[2] == "```bash"
    for line, command in zip(lines[3:5], TOP_COMMANDS):
        assert re.fullmatch(re.escape(command) + r" +# .+", line), line
    assert lines[5] == "```"


def test_ci_runs_the_readme_test_line_as_written():
    """.ci/run runs the README's test line itself, read from the README (so
    the two cannot drift), with no venv activated and nothing exported: CI
    fails wherever a newcomer copying the line would."""
    ci = ROOT / ".ci" / "run"
    printed = subprocess.run(["bash", str(ci), "--print"], capture_output=True, text=True, check=True).stdout
    assert printed.strip() == TOP_COMMANDS[1]
    script = ci.read_text(encoding="utf-8")
    code = [line for line in script.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert not any("activate" in line or line.lstrip().startswith("export") for line in code), code
    assert 'bash -c "$line"' in script


def test_readme_keeps_the_contract_and_api_md_holds_the_reference():
    readme, api = _headings(README), _headings(API)
    for heading in ("Install", "Usage", "What the component writes", "Annotating dialog corpora"):
        assert heading in readme
    for heading in ("Registered names", "Settings", "Training data formats", "Commands", "Configs",
                    "Project workflows", "Where things live"):
        assert heading in api and heading not in readme, heading
    # The contract is written once: the table of what the component writes is in the README only.
    row = '| `.attrs["token_probs"]` |'
    assert row in README.read_text(encoding="utf-8") and row not in API.read_text(encoding="utf-8")
    assert "docs/api.md" in README.read_text(encoding="utf-8")


def test_api_md_names_every_registered_entry_point():
    setup = configparser.ConfigParser()
    setup.read(ROOT / "setup.cfg", encoding="utf-8")
    api = API.read_text(encoding="utf-8")
    names = []
    for group, value in setup["options.entry_points"].items():
        if group == "console_scripts":
            continue
        names += [entry.split("=")[0].strip() for entry in value.strip().splitlines() if "=" in entry]
    assert len(names) > 10
    missing = [name for name in names if f"`{name}`" not in api]
    assert not missing, missing


def test_no_process_words():
    for path in (README, API):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\b(issues?|sessions?)\b", text, re.I), path


@pytest.mark.parametrize("path", [README, API], ids=["README.md", "docs/api.md"])
def test_links_resolve(path):
    text = _without_code(path.read_text(encoding="utf-8"))
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    assert links
    broken = []
    for link in links:
        if re.match(r"[a-z]+:", link):
            continue
        target, _, anchor = link.partition("#")
        target_path = (path.parent / target).resolve() if target else path
        if not target_path.exists():
            broken.append(link)
        elif anchor and target_path.suffix == ".md" and anchor not in _anchors(target_path):
            broken.append(link)
    assert not broken, broken


def test_links_into_the_readme_resolve():
    broken = []
    for path in ROOT.glob("**/*.md"):
        if ".venv" in path.parts or path == README:
            continue
        for link in re.findall(r"\]\(([^)\s]*README\.md#[^)\s]+)\)", path.read_text(encoding="utf-8")):
            target, _, anchor = link.partition("#")
            target_path = (path.parent / target).resolve()
            if target_path == README and anchor not in _anchors(README):
                broken.append((str(path.relative_to(ROOT)), link))
    assert not broken, broken


def test_named_sections_exist():
    """'README, "Backbones"', 'README ("What the component writes")', 'docs/api.md,
    "Registered names"' in the code and docs name a heading or a bold rule of that file."""
    pattern = re.compile(r"""(README(?:\.md)?|docs/api\.md)(?:'s)?,?\s*\(?\s*"([A-Z][\w ]+)\"""")
    targets = {"README": README, "README.md": README, "docs/api.md": API}
    seen, broken = 0, []
    for folder in ("docs", "spacy_paraphrase", "studies", "scripts", "benchmarks"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix not in (".py", ".md"):
                continue
            text = re.sub(r"\n\s*#?\s*", " ", path.read_text(encoding="utf-8"))
            for name, section in pattern.findall(text):
                seen += 1
                target = targets[name].read_text(encoding="utf-8")
                if section not in _headings(targets[name]) and f"**{section}**" not in target:
                    broken.append((str(path.relative_to(ROOT)), name, section))
    assert seen > 5
    assert not broken, broken


def _python_block(marker: str) -> str:
    blocks = re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"), flags=re.S | re.M)
    found = [block for block in blocks if marker in block]
    assert len(found) == 1, found
    return found[0]


def test_readme_blank_pipeline_snippet_runs_offline():
    """The README's blank-pipeline snippet runs as written, offline; without its
    `nlp.initialize()` it fails as the README says."""
    snippet = _python_block('nlp.add_pipe("paraphrase_spans")')
    assert "nlp.initialize()" in snippet
    without_init = "\n".join(line for line in snippet.splitlines() if "nlp.initialize()" not in line)
    program = (
        f"{snippet}\n"
        "assert 0.0 <= doc.cats['PARAPHRASE'] <= 1.0\n"
        "assert len(doc.spans['paraphrase'].attrs['token_probs']) == len(doc)\n"
        "try:\n"
        f"    exec({without_init!r})\n"
        "except ValueError as error:\n"
        "    assert \"Cannot get dimension 'nI'\" in str(error), error\n"
        "else:\n"
        "    raise AssertionError('ran without nlp.initialize()')\n"
    )
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-c", program], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
