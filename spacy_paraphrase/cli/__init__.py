"""Command line: ``python -m spacy_paraphrase COMMAND`` (or ``spacy-paraphrase``).

One module per command, each a thin typer command over a plain function that
can be called from Python (``spacy/cli/`` is the model); ``_util.py`` holds the
app, ``load``, the shared option types and ``CommandError``.

convert FORMAT  dataset file -> .spacy file of reference pair Docs (one sub-command per format)
annotate        score every turn pair of a dialog corpus -> JSON records (docs/annotate.md)
visualize       HTML of pair Docs or annotate records: both turns, shaded words, linked spans
report          annotate records -> a corpus report: rates with intervals per group and over time, phrases
validate        how many pairs to code; a coding sheet for human coders; agreement and rates from coded sheets
evaluate        score a pipeline on pair Docs (keeps the turns; prints and saves every key)
tune            tune a setting of a paraphrase_spans or pair_classifier (a threshold, the span decoding,
                the vote-share map) on pair Docs, and save it
cross-tune      estimate the scores of tuned settings on unseen pairs (k-fold)
check-strings   the same pairs as strings and as word lists: what a user sees differ
baseline        write a pipeline with a reference baseline (lexical / always)
split           hold out a seeded random dev split of a .spacy file
sample          write a seeded random subsample of a .spacy file
quantize        copy a trained pipeline as one whose transformer runs in int8 on CPU
import-model    a published Hugging Face token classifier (the paper's own model) as a pipeline
backbone        list / install the backbones that can be built offline
llm             serve a local LLM; silver training data from an LLM pipeline
"""
from ._util import app

# the commands, in the order --help lists them
from .convert import convert_app  # noqa: F401
from .backbone import backbone_app  # noqa: F401
from .annotate import annotate, annotate_cli  # noqa: F401
from .visualize import visualize, visualize_cli  # noqa: F401
from .report import report, report_cli  # noqa: F401
from .validate import validate_app  # noqa: F401
from .quantize import quantize, quantize_cli  # noqa: F401
from .import_model import import_model, import_model_cli  # noqa: F401
from .llm import llm_app  # noqa: F401
from .evaluate import evaluate, evaluate_cli  # noqa: F401
from .tune import tune, tune_cli  # noqa: F401
from .cross_tune import cross_tune, cross_tune_cli  # noqa: F401
from .check_strings import check_strings, check_strings_cli  # noqa: F401
from .baseline import baseline, baseline_cli  # noqa: F401
from .split import split, split_cli  # noqa: F401
from .sample import sample, sample_cli  # noqa: F401


def main() -> None:
    import sys

    from wasabi import msg

    if not sys.stdout.isatty():  # a pipe or a log: plain messages, one line each (no colour, no wrap)
        msg.pretty = False
    app()
