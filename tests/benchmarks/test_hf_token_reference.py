"""benchmarks.hf_token_reference: the plain-HF token-classification reference
shared by run_speed (system b) and run_hf_reference."""
import numpy
import pytest
import torch

from benchmarks import hf_token_reference as hf

PAIRS = [
    (["Well", "", "bipartisanship", "negotiations", "today."], ["Yes", "today"]),
    (["a"] * 30, ["b", "c"]),  # cut by max_length below
]


@pytest.fixture(scope="module")
def reference(tiny_bert):
    torch.manual_seed(0)
    tokenizer, model = hf.load(tiny_bert)
    model.eval()
    return tokenizer, model


def test_first_pieces_map_each_word_to_its_own_first_piece(reference):
    tokenizer, _ = reference
    enc, first_pieces = hf.encode(tokenizer, PAIRS, max_length=24)
    for i, (pair, pieces) in enumerate(zip(PAIRS, first_pieces)):
        word_ids, seq_ids = enc.word_ids(i), enc.sequence_ids(i)
        for side, (words, idx) in enumerate(zip(pair, pieces)):
            assert len(idx) == len(words)
            for w, j in enumerate(idx):
                if j >= 0:
                    assert (seq_ids[j], word_ids[j]) == (side, w)
                    assert j == 0 or (seq_ids[j - 1], word_ids[j - 1]) != (side, w)  # the first piece
    first, second = first_pieces[0]
    assert first[1] == -1 and all(j >= 0 for w, j in enumerate(first) if w != 1)  # the empty word has no piece
    assert all(j >= 0 for j in second)
    cut_first, cut_second = first_pieces[1]
    assert cut_first[-1] == -1 and cut_first[0] >= 0  # truncation cuts the longer (first) turn
    assert all(j >= 0 for j in cut_second)


def test_labels_only_on_first_pieces(reference):
    tokenizer, _ = reference
    enc, first_pieces = hf.encode(tokenizer, PAIRS, max_length=24)
    targets = [([1.0, 1.0, 0.6, 0.4, 0.0], [0.0, 0.5]), ([1.0] * 30, [0.0, 0.0])]
    labels = hf.labels(enc, first_pieces, targets)
    assert labels.shape == enc["input_ids"].shape
    expected = torch.full(labels.shape, -100, dtype=torch.long)
    for i, (pieces, turn_targets) in enumerate(zip(first_pieces, targets)):
        for idx, values in zip(pieces, turn_targets):
            for j, t in zip(idx, values):
                if j >= 0:
                    expected[i, j] = int(t >= 0.5)
    assert torch.equal(labels, expected)
    # pair 0: "Well" and "bipartisanship" (0.6) on, the empty word skipped, "today" (0.5) on
    assert sorted(labels[0][labels[0] >= 0].tolist()) == [0, 0, 0, 1, 1, 1]
    # "bipartisanship" has three pieces: only its first one is labelled
    start = first_pieces[0][0][2]
    assert labels[0, start].item() == 1 and labels[0, start + 1 : start + 3].tolist() == [-100, -100]


def test_word_probs_and_pair_score():
    probs = numpy.asarray([0.0, 0.9, 0.2, 0.7, 0.4], dtype="float32")
    first, second = hf.word_probs(probs, ([1, -1, 2], [3, 4]))
    assert numpy.allclose(first[[0, 2]], [0.9, 0.2]) and numpy.isnan(first[1])
    assert numpy.allclose(second, [0.7, 0.4])
    assert hf.pair_score((first, second)) == pytest.approx(0.7)  # min over turns of the max
    assert hf.pair_score((first, numpy.asarray([numpy.nan], dtype="float32"))) == 0.0


def test_predict_batch_gives_word_probabilities(reference):
    tokenizer, model = reference
    with torch.inference_mode():
        out = hf.predict_batch(tokenizer, model, PAIRS, max_length=24)
    assert len(out) == len(PAIRS)
    for (words_first, words_second), (first, second) in zip(PAIRS, out):
        assert first.shape == (len(words_first),) and second.shape == (len(words_second),)
        scored = numpy.concatenate([first, second])
        scored = scored[~numpy.isnan(scored)]
        assert ((scored > 0) & (scored < 1)).all()
    assert numpy.isnan(out[0][0][1]) and numpy.isnan(out[1][0][-1])
    assert not numpy.isnan(out[0][1]).any()
