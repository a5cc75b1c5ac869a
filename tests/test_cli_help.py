"""Every option of the commands in spacy_paraphrase/cli.py has a help text,
and evaluate leaves out spaCy's tokenizer scores (1.0 on pair Docs)."""
import subprocess
import sys

import typer.main

from spacy_paraphrase.cli import TOKENIZER_KEYS, app, evaluate_pipeline


def test_every_option_has_help():
    group = typer.main.get_command(app)
    missing = []
    for name in ("evaluate", "find-threshold", "cross-tune", "check-strings", "baseline", "split", "sample"):
        for param in group.commands[name].params:
            if param.param_type_name == "option" and not (param.help or "").strip():
                missing.append(f"{name} {param.opts[0]}")
    assert missing == []


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
    code = "import spacy_paraphrase; spacy_paraphrase.ParaphraseSpans; import sys; print('spacy_transformers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert out.stdout.strip() == "True"  # the lazy name resolves to the component


def test_lazy_exports_resolve_to_their_modules():
    import importlib

    for package in ("spacy_paraphrase", "spacy_paraphrase.paraphrase_spans", "spacy_paraphrase.pair_classifier",
                    "spacy_paraphrase.encoder"):
        module = importlib.import_module(package)
        for name in getattr(module, "__all__", []):
            assert getattr(module, name) is not None, (package, name)
        assert set(getattr(module, "__all__", [])) <= set(dir(module))
