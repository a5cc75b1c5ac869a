"""Loading a pipeline imports neither scikit-learn nor scipy through transformers
(encoder/lean_imports.py), and transformers still finds both when it calls them."""
import importlib.util
import os
import subprocess
import sys

import pytest

from tests.util import make_nlp, make_tiny_bert

HEAVY = ("sklearn", "scipy", "pandas", "pyarrow")
LOAD = (
    "import sys, spacy\n"
    "nlp = spacy.load(sys.argv[1])\n"
    f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
)
# transformers as by default after the load: its flags say present, the skipped names work
CALLS = LOAD + (
    "from transformers.utils import import_utils\n"
    "from transformers.generation import candidate_generator\n"
    "from transformers.loss import loss_for_object_detection as detection\n"
    "assert import_utils.is_sklearn_available() and import_utils.is_scipy_available()\n"
    "fpr, tpr, _ = candidate_generator.roc_curve([0, 1, 1, 0], [0.1, 0.8, 0.4, 0.3])\n"
    "rows, cols = detection.linear_sum_assignment([[4, 1], [2, 3]])\n"
    "print(tpr.tolist(), cols.tolist())\n"
)
needs_both = pytest.mark.skipif(
    importlib.util.find_spec("sklearn") is None or importlib.util.find_spec("scipy") is None,
    reason="scikit-learn or scipy not installed: nothing to leave out",
)


def run(code: str, path, **env) -> list:
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                          env={**os.environ, "SPACY_PARAPHRASE_EAGER_IMPORTS": "", **env})
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()


@pytest.fixture(scope="module")
def saved_pipeline(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lean")
    nlp = make_nlp(str(make_tiny_bert(tmp / "bert")))
    nlp.initialize()
    nlp.to_disk(tmp / "nlp")
    return tmp / "nlp"


@needs_both
def test_load_imports_neither_sklearn_nor_scipy(saved_pipeline):
    assert run(LOAD, saved_pipeline) == ["[]"]


@needs_both
def test_eager_switch_imports_what_transformers_imports_by_default(saved_pipeline):
    assert run(LOAD, saved_pipeline, SPACY_PARAPHRASE_EAGER_IMPORTS="1") == [repr(sorted(HEAVY))]


@needs_both
def test_transformers_calls_the_deferred_functions(saved_pipeline):
    lines = run(CALLS, saved_pipeline)
    assert lines == ["[]", "[0.0, 0.5, 1.0, 1.0] [1, 0]"]


def test_nothing_changes_when_transformers_read_its_flags_already(monkeypatch):
    from spacy_paraphrase.encoder import lean_imports

    module = lean_imports.DEFERRED["_sklearn_available"][0][0]
    monkeypatch.setitem(sys.modules, module, sys.modules.get(module) or object())
    assert lean_imports.import_transformers_modeling() == []
