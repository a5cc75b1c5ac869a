"""Every option of the commands in spacy_paraphrase/cli/ has a help text and
each short flag means one option in every command; evaluate leaves out
spaCy's tokenizer scores (1.0 on pair Docs)."""
import subprocess
import sys

import typer.main

from spacy_paraphrase.cli import app
from spacy_paraphrase.evaluation import TOKENIZER_KEYS, evaluate_pipeline


def _commands(group, prefix=""):
    for name, command in group.commands.items():
        if hasattr(command, "commands"):  # a sub-app: convert, backbone
            yield from _commands(command, f"{prefix}{name} ")
        else:
            yield prefix + name, command


def test_every_option_and_argument_has_help():
    commands = dict(_commands(typer.main.get_command(app)))
    assert {"annotate", "convert pairs", "backbone install", "quantize", "tune"} <= set(commands)
    missing = [f"{name} {param.opts[0]}" for name, command in commands.items() for param in command.params
               if not (getattr(param, "help", None) or "").strip()]
    assert missing == []


def test_each_short_flag_means_one_option_in_every_command():
    meanings = {}
    for name, command in _commands(typer.main.get_command(app)):
        for param in command.params:
            opts = list(param.opts) + list(getattr(param, "secondary_opts", []))
            long = next((o for o in opts if o.startswith("--")), param.name)
            for short in (o for o in opts if o.startswith("-") and not o.startswith("--")):
                meanings.setdefault(short, {}).setdefault(long, []).append(name)
    assert {short: by_long for short, by_long in meanings.items() if len(by_long) > 1} == {}
    assert set(meanings["-k"]) == {"--folds"} and set(meanings["-n"]) == {"--n-process"}


def test_evaluate_leaves_out_the_tokenizer_scores(trained_pipeline):
    nlp, examples = trained_pipeline
    scores = evaluate_pipeline(nlp, examples)
    assert not set(TOKENIZER_KEYS) & set(scores)
    assert "paraphrase_spans_token_f" in scores


def test_the_command_line_imports_no_transformer_stack():
    """`--help` costs no more than spaCy's: importing the CLI (and the package) loads neither
    spacy-transformers nor transformers; the components load them when used."""
    code = ("import sys, spacy_paraphrase.cli, spacy_paraphrase; "
            "print(sorted(m for m in ('spacy_transformers', 'transformers', 'ray', 'spacy_llm') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
    code = "import spacy_paraphrase, sys; spacy_paraphrase.render; print(spacy_paraphrase.render.__module__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert out.stdout.strip() == "spacy_paraphrase.visualize.markup"  # the lazy name resolves on first use
