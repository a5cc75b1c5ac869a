import json

import pytest

from spacy_paraphrase.annotate.local import run_local
from spacy_paraphrase.annotate.resume import JobFiles, ResumeError
from tests.annotate.helpers import load_progress
from spacy_paraphrase.dialogs import SourceOptions
from tests.annotate.helpers import (
    assert_same_records,
    check_record,
    mediasum_texts,
    read_jsonl,
    write_chat,
    write_mediasum,
    write_pairs_tsv,
    write_turns_csv,
)

QUIET = dict(progress_bar=False, batch_size=2, buffer_batches=2)


def run(model, corpus, out, **options):
    return run_local(model, corpus, out, **dict(QUIET, **options))


def test_mediasum_records_skips_and_malformed(annotate_model, tmp_path):
    corpus = write_mediasum(tmp_path / "news.jsonl", extra_lines=["{not json", '{"id": "X-1", "utt": ["a"], "speaker": "A"}'])
    out = tmp_path / "out.jsonl"
    summary = run(annotate_model, corpus, out, with_probs=True)
    records = read_jsonl(out)
    assert [r["pair_id"] for r in records] == ["CNN-1-0", "CNN-1-1", "CNN-1-3", "NPR-2-0", "NPR-2-1", "NPR-2-2"]
    assert records[1]["first"]["utterance_ids"] == ["CNN-1-1", "CNN-1-2"]
    texts = mediasum_texts()
    for record in records:
        check_record(record, texts)
    errors = read_jsonl(str(out) + ".errors.jsonl")
    skipped = [e for e in errors if e["kind"] == "skipped"]
    assert [(e["pair_id"], e["side"], e["path"], e["line"]) for e in skipped] == [("CNN-1-4", "second", str(corpus), 1)]
    assert "whitespace" in skipped[0]["reason"]
    malformed = sorted((e["line"], e["path"]) for e in errors if e["kind"] == "malformed")
    assert malformed == [(3, str(corpus)), (4, str(corpus))]
    assert (summary.written, summary.skipped, summary.malformed, summary.consumed) == (6, 1, 2, 7)
    assert summary.paraphrases == 6 and not summary.already_done
    assert any("malformed records: 2" in line for line in summary.lines())


@pytest.mark.parametrize("writer,fmt,ids", [
    (write_chat, "chat", ["c1-0", "c1-1"]),
    (write_turns_csv, "turns", ["d1-0", "d1-1", "d2-0"]),
    (write_pairs_tsv, "pairs", ["pairs:2", "pairs:4"]),
])
def test_other_formats(annotate_model, tmp_path, writer, fmt, ids):
    name = {"chat": "chat.jsonl", "turns": "turns.csv", "pairs": "pairs.tsv"}[fmt]
    corpus = writer(tmp_path / name)
    out = tmp_path / "out.jsonl"
    summary = run(annotate_model, corpus, out, source=SourceOptions(fmt=fmt), with_probs=True)
    records = read_jsonl(out)
    assert [r["pair_id"] for r in records] == ids
    for record in records:
        for side in ("first", "second"):
            assert len(record["words"][side]) == len(record[side]["text"].split())
    errors = read_jsonl(str(out) + ".errors.jsonl")
    assert all(e["path"] == str(corpus) and isinstance(e["line"], int) for e in errors)
    assert summary.malformed + summary.skipped == len(errors) == {"chat": 1, "turns": 1, "pairs": 1}[fmt]
    if fmt == "pairs":
        assert records[0]["meta"] == {"label": "1"}
        assert errors[0]["kind"] == "skipped" and errors[0]["line"] == 3


def test_role_filter_and_reply_to(annotate_model, tmp_path):
    corpus = write_mediasum(tmp_path / "news.jsonl")
    out = tmp_path / "out.jsonl"
    source = SourceOptions(first_roles=["guest"], second_roles=["host"])
    run(annotate_model, corpus, out, source=source)
    records = read_jsonl(out)
    assert [r["pair_id"] for r in records] == ["CNN-1-1", "NPR-2-0", "NPR-2-2"]
    assert all(r["first"]["speaker"] == "GUEST" and r["second"]["speaker"] == "HOST" for r in records)
    summary = run(annotate_model, corpus, tmp_path / "replies.jsonl", source=SourceOptions(pairing="reply-to"))
    ids = [r["pair_id"] for r in read_jsonl(tmp_path / "replies.jsonl")]
    assert ids == ["CNN-1-0>CNN-1-1", "CNN-1-2>CNN-1-3", "NPR-2-0>NPR-2-1", "NPR-2-1>NPR-2-2", "NPR-2-2>NPR-2-3"]
    assert summary.skipped == 2  # replies to / from the empty and the whitespace-only utterance


def test_limit_counts_pairs_read(annotate_model, tmp_path):
    corpus = write_mediasum(tmp_path / "news.jsonl")
    summary = run(annotate_model, corpus, tmp_path / "out.jsonl", limit=5)
    assert summary.consumed == 5 and summary.written == 4 and summary.skipped == 1
    assert len(read_jsonl(tmp_path / "out.jsonl")) == 4
    assert run(annotate_model, corpus, tmp_path / "zero.jsonl", limit=0).written == 0


def test_n_process_2_gives_the_same_records(annotate_model, tmp_path):
    corpus = write_mediasum(tmp_path / "news.jsonl", n_copies=3)
    run(annotate_model, corpus, tmp_path / "one.jsonl", with_probs=True)
    run(annotate_model, corpus, tmp_path / "two.jsonl", with_probs=True, n_process=2)
    one, two = read_jsonl(tmp_path / "one.jsonl"), read_jsonl(tmp_path / "two.jsonl")
    assert len(one) == 18
    assert [r["pair_id"] for r in one] == [r["pair_id"] for r in two]
    assert_same_records(two, one)


def test_finished_run_is_not_redone_and_other_arguments_are_refused(annotate_model, tmp_path):
    corpus = write_mediasum(tmp_path / "news.jsonl")
    out = tmp_path / "out.jsonl"
    run(annotate_model, corpus, out)
    before = out.read_bytes()
    again = run(annotate_model, corpus, out)
    assert again.already_done and again.written == 6 and out.read_bytes() == before
    with pytest.raises(ResumeError, match="with_probs"):
        run(annotate_model, corpus, out, with_probs=True)
    with pytest.raises(ResumeError, match="limit"):
        run(annotate_model, corpus, out, limit=3)
    fresh = run(annotate_model, corpus, out, with_probs=True, overwrite=True)
    assert fresh.written == 6 and "words" in read_jsonl(out)[0]
    other = tmp_path / "other.jsonl"
    other.write_text("not mine\n")
    with pytest.raises(ResumeError, match="--overwrite"):
        run(annotate_model, corpus, other)
    assert other.read_text() == "not mine\n"


def test_a_run_of_another_checkpoint_version_is_not_resumed(annotate_model, tmp_path):
    """Records of another version differ in shape (version 1 kept no offsets):
    resuming would mix the two shapes in one file."""
    corpus = write_mediasum(tmp_path / "news.jsonl")
    out = tmp_path / "out.jsonl"
    run(annotate_model, corpus, out, limit=2)
    checkpoint = out.with_name(out.name + ".checkpoint.json")
    state = json.loads(checkpoint.read_text())
    state["version"], state["done"] = 1, False
    checkpoint.write_text(json.dumps(state))
    before = out.read_bytes()
    with pytest.raises(ResumeError, match="another version of spacy-paraphrase .* --overwrite"):
        run(annotate_model, corpus, out, limit=2)
    assert out.read_bytes() == before


def test_crash_mid_buffer_resumes_without_loss_or_duplicates(annotate_model, tmp_path, monkeypatch):
    corpus = write_mediasum(tmp_path / "news.jsonl", n_copies=4, first_lines=["{broken"], extra_lines=["[]"])
    source = SourceOptions(fmt="mediasum")  # the broken first line hides the format
    reference = tmp_path / "reference.jsonl"
    run(annotate_model, corpus, reference, source=source)
    out = tmp_path / "out.jsonl"
    calls = {"n": 0}
    original = JobFiles.write

    def crashing_write(self, records, entries):
        calls["n"] += 1
        if calls["n"] == 3:  # half of this buffer reaches the file, then the process "dies"
            records = list(records)
            self._out.write(json.dumps(records[0]).encode()[:25])
            self._out.flush()
            raise KeyboardInterrupt
        return original(self, records, entries)

    monkeypatch.setattr(JobFiles, "write", crashing_write)
    with pytest.raises(KeyboardInterrupt):
        run(annotate_model, corpus, out, source=source)
    assert 0 < load_progress(out).consumed < 28
    assert out.stat().st_size > load_progress(out).output_bytes  # a half-written tail
    monkeypatch.setattr(JobFiles, "write", original)
    stopped_at = load_progress(out).consumed
    summary = run(annotate_model, corpus, out, source=source)
    assert summary.resumed_at == stopped_at and summary.consumed == 28
    assert_same_records(read_jsonl(out), read_jsonl(reference))
    assert read_jsonl(str(out) + ".errors.jsonl") == read_jsonl(str(reference) + ".errors.jsonl")
    assert (summary.written, summary.skipped, summary.malformed) == (24, 4, 2)


def test_run_stopped_before_its_first_buffer_starts_again(annotate_model, tmp_path, monkeypatch):
    """A run killed before any buffer was committed (here: while the first
    buffer is half written) leaves a checkpoint of nothing done: started again,
    with the same or other arguments, it runs without --overwrite and drops the
    uncommitted bytes."""
    corpus = write_mediasum(tmp_path / "news.jsonl")
    reference = tmp_path / "reference.jsonl"
    run(annotate_model, corpus, reference, with_probs=True)
    out = tmp_path / "out.jsonl"
    original = JobFiles.write

    def dying_write(self, records, entries):
        self._out.write(b'{"pair_id": "half')
        self._out.flush()
        raise KeyboardInterrupt

    monkeypatch.setattr(JobFiles, "write", dying_write)
    with pytest.raises(KeyboardInterrupt):
        run(annotate_model, corpus, out)
    monkeypatch.setattr(JobFiles, "write", original)
    assert out.stat().st_size > 0 and load_progress(out).output_bytes == 0
    summary = run(annotate_model, corpus, out, with_probs=True)  # other arguments: nothing to keep
    assert summary.resumed_at == 0 and summary.written == 6
    assert_same_records(read_jsonl(out), read_jsonl(reference))


def test_checkpoint_is_written_before_the_model_loads(annotate_model, tmp_path, monkeypatch):
    import spacy_paraphrase.annotate.local as local

    corpus = write_mediasum(tmp_path / "news.jsonl")
    out = tmp_path / "out.jsonl"

    def unloadable(*args, **kwargs):
        raise OSError("no such model")

    monkeypatch.setattr(local, "PairAnnotator", unloadable)
    with pytest.raises(OSError):
        run(annotate_model, corpus, out)  # a pipeline that passes the path check but fails to load
    assert load_progress(out) is not None and not load_progress(out).done
    monkeypatch.undo()
    notes = tmp_path / "notes.jsonl"
    notes.write_text("not the run's\n")
    with pytest.raises(ResumeError, match="not this output's errors file"):
        run(annotate_model, corpus, out, errors=notes)  # nothing to keep, but that file is not the run's
    assert notes.read_text() == "not the run's\n"
    assert run(annotate_model, corpus, out).written == 6  # nothing committed: starts, no --overwrite needed


@pytest.mark.parametrize("writer,name", [(write_mediasum, "news.jsonl"), (write_pairs_tsv, "pairs.tsv")])
@pytest.mark.parametrize("count", [True, False])
def test_a_run_guesses_the_format_once_and_opens_the_input_once_per_pass(annotate_model, tmp_path, monkeypatch,
                                                                        writer, name, count):
    """The corpus is opened once (``dialogs.DialogCorpus``): one format guess (one
    open of the input), then one open for the count and one for the pairs; the
    reader started to check the input is the first pass's."""
    from spacy_paraphrase.cli.annotate import annotate
    from spacy_paraphrase.dialogs import pairing, streaming

    corpus = writer(tmp_path / name)
    guesses, opens = [], []
    guess = pairing.guess_format
    monkeypatch.setattr(pairing, "guess_format", lambda path: guesses.append(path) or guess(path))
    monkeypatch.setattr(streaming, "open", lambda path, *a, **k: opens.append(path) or open(path, *a, **k),
                        raising=False)
    annotate(annotate_model, corpus, tmp_path / "out.jsonl", count=count)
    assert len(guesses) == 1
    assert opens == [corpus] * (3 if count else 2)  # the guess, the count, the pairs
    assert len(read_jsonl(tmp_path / "out.jsonl")) == (2 if name == "pairs.tsv" else 6)


def test_a_run_that_stops_early_leaves_no_input_file_open(annotate_model, tmp_path, opened_inputs):
    """``--limit`` stops the count and the pairs before the input's end; the
    run still closes every file of the input it opened (a pair file's reader
    holds its file until closed)."""
    run(annotate_model, write_pairs_tsv(tmp_path / "pairs.tsv"), tmp_path / "out.jsonl", limit=1)
    assert opened_inputs and opened_inputs.still_open() == []
