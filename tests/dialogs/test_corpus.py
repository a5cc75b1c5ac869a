"""``DialogCorpus``: its conversations, read by the reader it started, and the
files it opens, closed however its passes end (with the garbage collector
off, so that a file left open stays open)."""
import pytest

from spacy_paraphrase.dialogs import (
    DialogCorpus, DialogFormatError, MalformedRecordError, SourceOptions, read_dialogs, read_turn_pairs)
from tests.annotate.helpers import write_mediasum, write_pairs_tsv, write_turns_csv

WRITERS = {"news.jsonl": write_mediasum, "talks.csv": write_turns_csv, "pairs.tsv": write_pairs_tsv}


@pytest.fixture(params=sorted(WRITERS))
def corpus_path(request, tmp_path):
    return WRITERS[request.param](tmp_path / request.param)


def test_a_count_that_stops_early_leaves_no_file_open(corpus_path, opened_inputs):
    corpus = DialogCorpus(corpus_path)
    assert corpus.count(limit=1) == 1
    assert opened_inputs and opened_inputs.still_open() == []  # the guess's file and the count's
    assert corpus.count() > 1  # a later pass reads again
    # as many as the pairs a run with that --limit reads: none for 0
    n = corpus.count()
    assert [corpus.count(limit=k) for k in (0, 2, n + 1)] == [0, min(2, n), n]
    assert opened_inputs.still_open() == []


def test_close_closes_the_started_reader_and_the_passes_left_unread(corpus_path, opened_inputs):
    DialogCorpus(corpus_path).close()  # the reader started when opened, never read
    assert opened_inputs.still_open() == []
    corpus = DialogCorpus(corpus_path)
    pairs = corpus.pairs(lambda problem: None)
    first = next(pairs)
    again = corpus.pairs(lambda problem: None)
    next(again)
    corpus.close()
    assert opened_inputs.still_open() == []
    assert list(pairs) == []  # a pass closed ends
    with DialogCorpus(corpus_path) as corpus:
        assert next(corpus.pairs(lambda problem: None)) == first  # a pass after close opens the input again
    assert opened_inputs.still_open() == []


def test_read_turn_pairs_closed_before_their_end_close_the_input(corpus_path, opened_inputs):
    for read in (lambda pairs: None, next):
        pairs = read_turn_pairs(corpus_path, on_problem=lambda problem: None)
        read(pairs)
        pairs.close()
        assert opened_inputs.still_open() == []


@pytest.mark.parametrize("name,content,options", [
    ("talks.csv", "conversation_id,speaker\nc1,A\n", {}),  # no text column
    ("talks.csv", "conversation_id,speaker,text,text\nc1,A,x,y\n", {}),  # a column named twice
    ("pairs.tsv", "question\tanswer\nx\ty\n", {"fmt": "pairs"}),  # no pair text columns
    ("pairs.tsv", "sentence1\tsentence2\nx\ty\n", {"reader_options": {"id_column": "key"}}),
])
def test_a_refused_header_leaves_no_file_open(tmp_path, opened_inputs, name, content, options):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DialogFormatError):
        DialogCorpus(path, SourceOptions(**options))
    assert opened_inputs and opened_inputs.still_open() == []


def test_conversations_are_read_by_the_started_reader(tmp_path, opened_inputs):
    path = write_mediasum(tmp_path / "news.jsonl", extra_lines=["{oops"])
    problems = []
    with DialogCorpus(path) as corpus:
        conversations = list(corpus.conversations(problems.append))
        assert len(opened_inputs) == 2  # the guess, the reader started when the corpus was opened
        assert len(problems) == 1
        assert [c.id for c in corpus.conversations(lambda problem: None)] == [c.id for c in conversations]
        assert len(opened_inputs) == 3  # a later pass opens the input again
        with pytest.raises(MalformedRecordError):  # without on_problem the first problem raises
            list(corpus.conversations())
    assert opened_inputs.still_open() == []
    assert conversations == list(read_dialogs(path, on_problem=lambda problem: None))


def test_a_pair_file_has_no_conversations(tmp_path, opened_inputs):
    path = write_pairs_tsv(tmp_path / "pairs.tsv")
    with DialogCorpus(path) as corpus:
        with pytest.raises(DialogFormatError, match="a pair file holds pairs, not dialogs"):
            corpus.conversations()
        assert len(list(corpus.pairs())) == 3  # the started reader is still the first pass's
        assert len(opened_inputs) == 2
    assert opened_inputs.still_open() == []
