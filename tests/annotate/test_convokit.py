import json

import pytest

from spacy_paraphrase.annotate.convokit_output import ConvoKitOutputError, run_convokit
from tests.annotate.helpers import mediasum_texts, read_jsonl, write_convokit

QUIET = dict(progress_bar=False, batch_size=2)


def by_id(path):
    return {u["id"]: u for u in read_jsonl(path)}


@pytest.fixture
def corpus(tmp_path):
    return write_convokit(tmp_path / "corpus")


def test_results_land_in_meta_and_nothing_else_changes(annotate_model, corpus, tmp_path):
    out = tmp_path / "annotated"
    summary = run_convokit(annotate_model, corpus, out, with_probs=True, **QUIET)
    assert (summary.written, summary.skipped) == (6, 1)
    before, after = by_id(corpus / "utterances.jsonl"), by_id(out / "utterances.jsonl")
    assert list(after) == list(before)  # same lines, same order
    texts = mediasum_texts()
    for utt_id, utterance in after.items():
        old = before[utt_id]
        assert {k: v for k, v in utterance.items() if k != "meta"} == {k: v for k, v in old.items() if k != "meta"}
        assert {k: v for k, v in utterance["meta"].items() if not k.startswith("sp_")} == old["meta"]
        for span in utterance["meta"].get("sp_paraphrase_spans", []) + utterance["meta"].get("sp_source_spans", []):
            assert texts[utt_id][span["start"]:span["end"]] == span["text"]
        if "sp_paraphrase_probs" in utterance["meta"]:
            assert len(utterance["meta"]["sp_paraphrase_probs"]) == len(texts[utt_id].split())
        for probs in utterance["meta"].get("sp_source_probs", {}).values():
            assert len(probs) == len(texts[utt_id].split())
    # CNN-1-3 (host) answers the merged guest turn CNN-1-1 + CNN-1-2 and opens the next pair
    host = after["CNN-1-3"]["meta"]
    assert host["sp_pair_id"] == "CNN-1-1" and host["sp_is_paraphrase"] is True
    assert [s["pair_id"] for s in host["sp_source_spans"]] == ["CNN-1-3"]
    assert after["CNN-1-2"]["meta"]["sp_pair_id"] == "CNN-1-0"  # the merged guest turn answers CNN-1-0
    assert after["CNN-1-1"]["meta"]["sp_score"] == after["CNN-1-2"]["meta"]["sp_score"]
    assert "sp_pair_id" not in after["CNN-1-6"]["meta"]  # whitespace-only turn: skipped
    conversations = json.loads((out / "conversations.json").read_text())
    assert conversations["CNN-1"] == {"meta": {"title": "t", "sp_pairs": 3, "sp_paraphrases": 3, "sp_skipped": 1},
                                      "vectors": []}
    index = json.loads((out / "index.json").read_text())
    old_index = json.loads((corpus / "index.json").read_text())
    assert index["utterances-index"]["sp_score"] == ["<class 'float'>"]
    assert index["utterances-index"]["sp_source_probs"] == ["<class 'dict'>"]
    assert index["conversations-index"]["sp_pairs"] == ["<class 'int'>"]
    for name, entries in old_index.items():
        if isinstance(entries, dict):
            assert {k: index[name][k] for k in entries} == entries
        else:
            assert index[name] == entries
    for name in ("speakers.json", "corpus.json", "README.txt"):
        assert (out / name).read_bytes() == (corpus / name).read_bytes()
    used = {k for u in after.values() for k in u["meta"] if k.startswith("sp_")}
    assert used <= set(index["utterances-index"])


def test_second_run_is_a_no_op_and_other_options_are_refused(annotate_model, corpus, tmp_path):
    out = tmp_path / "annotated"
    run_convokit(annotate_model, corpus, out, **QUIET)
    files = {p.name: p.read_bytes() for p in out.iterdir()}
    again = run_convokit(annotate_model, corpus, out, **QUIET)
    assert again.already_done
    assert {p.name: p.read_bytes() for p in out.iterdir()} == files
    with pytest.raises(ValueError, match="with_probs"):
        run_convokit(annotate_model, corpus, out, with_probs=True, **QUIET)
    (out / "utterances.jsonl").unlink()  # an interrupted merge is redone
    run_convokit(annotate_model, corpus, out, **QUIET)
    assert (out / "utterances.jsonl").read_bytes() == files["utterances.jsonl"]


def test_existing_keys_and_foreign_outputs_are_refused(annotate_model, corpus, tmp_path):
    lines = (corpus / "utterances.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["meta"]["sp_score"] = 1.0
    (corpus / "utterances.jsonl").write_text("\n".join([json.dumps(first)] + lines[1:]) + "\n")
    out = tmp_path / "annotated"
    with pytest.raises(ConvoKitOutputError, match="sp_score"):
        run_convokit(annotate_model, corpus, out, **QUIET)
    assert not out.exists()
    run_convokit(annotate_model, corpus, out, meta_prefix="spx_", **QUIET)
    assert "spx_score" in by_id(out / "utterances.jsonl")["CNN-1-1"]["meta"]
    with pytest.raises(ConvoKitOutputError, match="paraphrase_"):
        run_convokit(annotate_model, corpus, tmp_path / "gold", meta_prefix="paraphrase_", **QUIET)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("x")
    with pytest.raises(ConvoKitOutputError, match="not an annotate output"):
        run_convokit(annotate_model, corpus, foreign, overwrite=True, **QUIET)
    with pytest.raises(ConvoKitOutputError, match="outside"):
        run_convokit(annotate_model, corpus, corpus / "inside", **QUIET)


def test_run_killed_before_its_first_buffer_or_while_copying_starts_again(annotate_model, corpus, tmp_path,
                                                                           monkeypatch):
    import shutil

    from spacy_paraphrase.annotate.resume import JobFiles

    reference = tmp_path / "reference"
    run_convokit(annotate_model, corpus, reference, **QUIET)
    out = tmp_path / "annotated"

    def dying(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(JobFiles, "write", dying)  # killed while writing the first buffer
    with pytest.raises(KeyboardInterrupt):
        run_convokit(annotate_model, corpus, out, **QUIET)
    monkeypatch.undo()
    monkeypatch.setattr(shutil, "copy2", dying)  # then killed while copying the corpus
    with pytest.raises(KeyboardInterrupt):
        run_convokit(annotate_model, corpus, out, **QUIET)
    monkeypatch.undo()
    assert not (out / "utterances.jsonl").exists()
    again = run_convokit(annotate_model, corpus, out, **QUIET)
    assert again.already_done

    def files(directory):
        return {p.name: p.read_bytes() for p in directory.iterdir() if not p.name.endswith(".checkpoint.json")}

    assert files(out) == files(reference)
