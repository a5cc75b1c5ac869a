"""``join_dialogs``: the corpus of ``report --dialogs`` opened once (a
``dialogs.DialogCorpus``) and closed."""
import pytest

from spacy_paraphrase.annotate.record_format import RecordsFileError
from spacy_paraphrase.report.dialogs import join_dialogs
from spacy_paraphrase.report.records import Records
from tests.annotate.helpers import write_pairs_tsv, write_turns_csv


def records(conversation_id, opener):
    return Records([{"conversation_id": conversation_id, "first": {"utterance_ids": [opener]}, "second": {}}],
                   sources=["out.jsonl"])


def test_the_corpus_is_read_once_through_its_started_reader_and_closed(tmp_path, opened_inputs):
    path = write_turns_csv(tmp_path / "talks.csv")
    data = records("d1", "d1-0")
    assert join_dialogs(data, path) == 1
    assert data.utterance_meta == {"d1-0": {"n": "1"}}
    # the guess, the reader started when the corpus was opened (the header
    # checked, the first pass), its second pass seeking to each conversation
    assert [fh.name for fh in opened_inputs] == [str(path)] * 3
    assert opened_inputs.still_open() == []


def test_a_pair_file_is_refused_as_before(tmp_path, opened_inputs):
    path = write_pairs_tsv(tmp_path / "pairs.tsv")
    with pytest.raises(RecordsFileError, match=f"--dialogs {path}: {path}: a pair file holds pairs, not dialogs"):
        join_dialogs(records("x", "x-0"), path)
    assert opened_inputs.still_open() == []
