"""cross_tuned shows a bar of its folds on stderr when given a description
and stderr is a terminal; without one (or off a terminal) it writes nothing."""
import io
import sys

from spacy_paraphrase.tuning.folds import cross_tuned


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _run(progress):
    return cross_tuned(list(range(8)), lambda tune_on: len(tune_on),
                       lambda test_on, best: {"n": len(test_on), "best": best},
                       folds=4, repeats=2, progress=progress)


def test_bar_on_a_terminal(monkeypatch):
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    result = _run("cross-tune")
    assert result["scores"] == {"n": 2.0, "best": 6.0}
    assert "cross-tune" in err.getvalue() and "/8" in err.getvalue()


def test_no_bar_without_a_description_or_off_a_terminal(monkeypatch):
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    _run(None)
    assert err.getvalue() == ""
    plain = io.StringIO()
    monkeypatch.setattr(sys, "stderr", plain)
    _run("cross-tune")
    assert plain.getvalue() == ""
