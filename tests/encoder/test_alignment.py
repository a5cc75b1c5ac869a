"""Wordpieces to tokens by character offsets (encoder/alignment.py)."""

from spacy_paraphrase import make_pair_doc
from spacy_paraphrase.encoder.alignment import char_to_token, token_pieces


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


def test_char_to_token_marks_whitespace(nlp):
    doc = make_pair_doc(nlp, ["ab", "", "c"], ["d"])  # "ab  c d": token 1 is whitespace
    assert doc.text == "ab  c d" and doc[1].is_space
    assert char_to_token(doc).tolist() == [0, 0, -1, -1, 2, -1, 3]
    assert char_to_token(doc, len(doc.text)).tolist() == char_to_token(doc).tolist()
