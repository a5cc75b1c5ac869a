import gc
import os

import pytest
import spacy

from tests.util import make_tiny_bert

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture
def nlp():
    return spacy.blank("en")


class OpenedFiles(list):
    """The files the dialog readers opened, in order."""

    def still_open(self):
        return [fh.name for fh in self if not fh.closed]


@pytest.fixture
def opened_inputs(monkeypatch):
    """The files the dialog readers open (``dialogs.streaming``), recorded;
    the garbage collector is off meanwhile, so only closing a file closes it."""
    from spacy_paraphrase.dialogs import streaming

    files = OpenedFiles()

    def recording_open(path, *args, **kwargs):
        fh = open(path, *args, **kwargs)
        files.append(fh)
        return fh

    monkeypatch.setattr(streaming, "open", recording_open, raising=False)
    enabled = gc.isenabled()
    gc.disable()
    yield files
    for fh in files:
        fh.close()
    if enabled:
        gc.enable()


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory):
    return str(make_tiny_bert(tmp_path_factory.mktemp("tiny_bert")))


@pytest.fixture(scope="session")
def trained_pipeline(tiny_bert):
    """transformer + paraphrase_spans on the tiny BERT, briefly trained."""
    from thinc.api import Adam, fix_random_seed
    from tests.util import make_examples, make_nlp

    fix_random_seed(0)
    nlp = make_nlp(tiny_bert)
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    opt = Adam(1e-3)
    for _ in range(10):
        nlp.update(examples, sgd=opt)
    return nlp, examples


def pytest_terminal_summary(terminalreporter):
    """One line saying how many documented commands ran (tests/test_docs_run.py),
    so a CI log shows the docs run test ran, not only that nothing failed."""
    def docs(outcome):
        return [r for r in terminalreporter.stats.get(outcome, [])
                if getattr(r, "nodeid", "").startswith("tests/test_docs_run.py") and getattr(r, "when", "call") == "call"]

    ran, failed, skipped = docs("passed"), docs("failed"), docs("skipped")
    if ran or failed or skipped:
        terminalreporter.write_sep("-", f"documented commands and blocks (tests/test_docs_run.py): {len(ran)} ran, "
                                        f"{len(failed)} failed, {len(skipped)} skipped (each reason in the skip list)")
