"""annotate's role filter: --role-pattern without --role-source pattern is an
error before the model loads, and the summary counts the pairs the filter
left out (resumed runs included)."""
import json

import pytest
from typer.testing import CliRunner

from spacy_paraphrase.annotate.local import run_local
from spacy_paraphrase.annotate.resume import JobFiles
from tests.annotate.helpers import load_progress
from spacy_paraphrase.dialogs import SourceOptions
from spacy_paraphrase.cli import app
from tests.annotate.helpers import read_jsonl, write_mediasum

runner = CliRunner(env={"COLUMNS": "200"})
QUIET = dict(progress_bar=False, batch_size=2, buffer_batches=1)
# MEDIASUM: 7 pairs per copy; with these roles 3 are written, 1 skipped (a
# whitespace-only turn) and 3 left out by the filter.
ROLES = ["--role-source", "pattern", "--role-pattern", "host=HOST", "--role-pattern", "guest=.",
         "--first-role", "guest", "--second-role", "host"]


def _text(result) -> str:
    return " ".join(result.output.split())


def test_role_pattern_without_role_source_pattern_fails_before_the_model_loads(annotate_model, tmp_path, monkeypatch):
    def no_model(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr("spacy_paraphrase.annotate.local.PairAnnotator", no_model)
    corpus = write_mediasum(tmp_path / "news.jsonl")
    out = tmp_path / "out.jsonl"
    for roles in (["--first-role", "guest"], []):
        result = runner.invoke(app, ["annotate", annotate_model, str(corpus), str(out),
                                     "--role-pattern", "host=HOST", *roles])
        assert result.exit_code == 1, result.output
        assert "--role-pattern is read with --role-source pattern only" in _text(result)
        assert "add --role-source pattern" in _text(result)
        assert len(result.output.strip().splitlines()) <= 3  # one message (wrapped), no traceback
    assert sorted(p.name for p in tmp_path.iterdir()) == ["news.jsonl"]
    with pytest.raises(ValueError, match="--role-source pattern"):
        run_local(annotate_model, corpus, out, source=SourceOptions(role_source="meta:x", role_patterns={"a": "b"}),
                  **QUIET)


def test_summary_counts_the_pairs_the_role_filter_left_out(annotate_model, tmp_path):
    corpus = write_mediasum(tmp_path / "news.jsonl")
    result = runner.invoke(app, ["annotate", annotate_model, str(corpus), str(tmp_path / "a.jsonl"), *ROLES])
    assert result.exit_code == 0, result.output
    assert "pairs written: 3" in _text(result)
    assert "pairs left out by the role filter (--first-role / --second-role): 3" in _text(result)
    # A filter nothing passes: 0 pairs, explained, and not under a plain ✔.
    nothing = ROLES[:4] + ["--first-role", "guest", "--second-role", "host"]  # no pattern gives "guest"
    result = runner.invoke(app, ["annotate", annotate_model, str(corpus), str(tmp_path / "b.jsonl"), *nothing])
    assert result.exit_code == 0, result.output
    text = _text(result)
    assert "No pair passed the role filter (7 left out)" in text and "pairs written: 0" in text
    assert "✔" not in result.output
    assert "pairs left out by the role filter (--first-role / --second-role): 7" in text


def test_the_role_filter_count_survives_a_resume(annotate_model, tmp_path, monkeypatch):
    corpus = write_mediasum(tmp_path / "news.jsonl", n_copies=4)
    source = SourceOptions(role_source="pattern", role_patterns={"host": "HOST", "guest": "."},
                           first_roles=["guest"], second_roles=["host"])
    reference = run_local(annotate_model, corpus, tmp_path / "reference.jsonl", source=source, **QUIET)
    assert (reference.written, reference.skipped, reference.role_dropped) == (12, 4, 12)
    out = tmp_path / "out.jsonl"
    calls = {"n": 0}
    original = JobFiles.write

    def dying_write(self, records, entries):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return original(self, records, entries)

    monkeypatch.setattr(JobFiles, "write", dying_write)
    with pytest.raises(KeyboardInterrupt):
        run_local(annotate_model, corpus, out, source=source, **QUIET)
    monkeypatch.setattr(JobFiles, "write", original)
    assert 0 < load_progress(out).role_dropped < 12
    summary = run_local(annotate_model, corpus, out, source=source, **QUIET)
    assert summary.resumed_at > 0
    assert (summary.written, summary.skipped, summary.role_dropped) == (12, 4, 12)
    assert read_jsonl(out) and json.loads(out.with_name("out.jsonl.checkpoint.json").read_text())["progress"]["role_dropped"] == 12
