"""Loading a pipeline imports neither scikit-learn nor scipy nor torch._dynamo
through transformers (encoder/lean_imports.py), and transformers still finds
each when it calls it."""
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
# a load and a forward pass, then whether torch.compile's tracer was imported
RUN = (
    "import sys, spacy\n"
    "from spacy_paraphrase import make_pair_doc\n"
    "nlp = spacy.load(sys.argv[1])\n"
    "list(nlp.pipe([make_pair_doc(nlp, 'We won the game .'.split(), 'You won it ?'.split())]))\n"
    "print('torch._dynamo' in sys.modules)\n"
)
# the stand-ins of torch._dynamo's names do what the real ones do, importing it
DYNAMO_CALLS = (
    "import sys, spacy\n"
    "nlp = spacy.load(sys.argv[1])\n"
    "from transformers import masking_utils\n"
    "from transformers.integrations import flex_attention\n"
    "print('torch._dynamo' in sys.modules)\n"
    "with masking_utils.TransformGetItemToIndex() as mode:\n"
    "    print(type(mode).__module__, type(mode).__name__)\n"
    "wrapped = flex_attention.WrappedFlexAttention(False)\n"
    "print(wrapped._is_flex_compiled, 'torch._dynamo' in sys.modules)\n"
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


def test_a_load_and_a_forward_pass_leave_torch_dynamo_out(saved_pipeline):
    assert run(RUN, saved_pipeline) == ["False"]
    assert run(RUN, saved_pipeline, SPACY_PARAPHRASE_EAGER_IMPORTS="1") == ["True"]


def test_transformers_uses_the_deferred_dynamo_names(saved_pipeline):
    assert run(DYNAMO_CALLS, saved_pipeline) == [
        "False", "torch._dynamo._trace_wrapped_higher_order_op TransformGetItemToIndex", "True True"]


def test_the_lazy_decorator_wraps_functions_only():
    from spacy_paraphrase.encoder.lean_imports import lazy_compiler_disable

    calls = []

    def real(fn, recursive=True, **kwargs):
        calls.append((fn, recursive))
        return fn

    disable = lazy_compiler_disable(real)

    @disable(recursive=False)
    def f(x):
        return x + 1

    assert calls == [] and f.__name__ == "f"  # not applied at definition
    assert f(1) == 2 and calls == [(f.__wrapped__, False)]  # applied on the call
    cls = type("C", (), {})
    assert disable(cls) is cls and calls[-1] == (cls, True)  # a class goes to the real one at once


def test_nothing_changes_when_transformers_read_its_flags_already(monkeypatch):
    from spacy_paraphrase.encoder import lean_imports

    module = lean_imports.DEFERRED["_sklearn_available"][0][0]
    monkeypatch.setitem(sys.modules, module, sys.modules.get(module) or object())
    assert lean_imports.import_transformers_modeling() == []
