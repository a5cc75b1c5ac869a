"""Wordpieces to tokens by character offsets (encoder/plan.py, "Aligning")."""

import numpy
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_paraphrase import make_pair_doc
from spacy_paraphrase.encoder.plan import TextIndex, align_pieces

from tests.util import char_to_token, token_pieces


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


def _reference_pieces(doc, offsets):
    """The rule of the module docstring, one piece at a time in plain Python
    (the implementation before it became array operations)."""
    text = doc.text
    result = [[] for _ in range(len(doc))]
    for j, (s, e) in enumerate(offsets):
        e = min(e, len(text))
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        for token in doc:
            if token.is_space or s >= e:
                continue
            if token.idx < e and s < token.idx + len(token.text):
                result[token.i].append(j)
    return result


@settings(max_examples=150, deadline=None)
@given(
    words=st.lists(st.sampled_from(["a", "bc", "", " ", "don't", "U.S.", "\u00a0", "Երևան", "x\u200by", "—", "(yes)"]),
                   min_size=2, max_size=14),
    cuts=st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60)), min_size=0, max_size=30),
)
def test_array_alignment_matches_the_rule_piece_by_piece(words, cuts):
    nlp = spacy.blank("en")
    half = len(words) // 2
    first, second = words[:half] or ["a"], words[half:] or ["b"]
    if not any(w.strip() for w in first) or not any(w.strip() for w in second):
        return
    try:
        doc = make_pair_doc(nlp, first, second)
    except Exception:
        return
    offsets = [(s, e) for s, e in cuts]
    assert token_pieces(doc, offsets) == _reference_pieces(doc, offsets)


def test_batch_alignment_keeps_docs_apart(nlp):
    # Docs laid end to end: a piece never reaches into the next Doc's text,
    # even when its range runs past its own Doc's end.
    docs = [make_pair_doc(nlp, ["ab", "cd "], ["e"]), make_pair_doc(nlp, ["fg"], ["h", "ij"])]
    texts = [d.text for d in docs]
    index = TextIndex.of(docs, [len(t) for t in texts], texts)
    base = index.char_base
    starts = numpy.array([0, 3, base[1] - 1, base[1] + 0, base[1] + 5])
    ends = numpy.array([2, base[1] + 2, base[1] + 2, base[1] + 2, base[1] + 7])
    # clipped to its Doc: the second piece covers "cd" only when its end is
    # cut at the Doc's end (encode_pairs does that); here the raw ranges run on
    tokens, pieces = align_pieces(index, starts, ends)
    pairs = set(zip(tokens.tolist(), pieces.tolist()))
    assert (0, 0) in pairs  # "ab"
    assert (int(index.token_base[1]), 3) in pairs  # "fg" of the second Doc
    assert (int(index.token_base[1]) + 2, 4) in pairs  # "ij"
    assert list(tokens) == sorted(tokens)
