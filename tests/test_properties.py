"""Property tests (hypothesis): alignment and the ContextDeP converter on
arbitrary Unicode words."""
import spacy
from hypothesis import given, settings, strategies as st

from spacy_paraphrase import make_pair_doc
from spacy_paraphrase.converters import convert_contextdep
from spacy_paraphrase.pair_doc import has_visible_text

from tests.util import HEADER, token_pieces

# words without whitespace, tabs or newlines (ContextDeP words are split on " ")
WORD = st.text(
    alphabet=st.characters(blacklist_categories=("Zs", "Zl", "Zp", "Cs", "Cc")),
    min_size=1,
    max_size=8,
)
# a turn needs a visible character (pair_doc.turn_text_problem; e.g. an unassigned code point alone is not)
WORDS = st.lists(st.one_of(WORD, st.just("")), min_size=1, max_size=10).filter(
    lambda words: any(words) and has_visible_text(" ".join(words)))


@given(WORDS, WORDS, st.booleans())
@settings(max_examples=200, deadline=None)
def test_alignment_gives_every_token_exactly_its_pieces(words1, words2, sentencepiece):
    """One made-up piece per non-space token, in BERT style (exact ranges) or
    sentencepiece style (range starting at the preceding space): each token
    gets exactly its own piece, whitespace tokens none."""
    nlp = spacy.blank("en")
    doc = make_pair_doc(nlp, words1, words2)
    offsets = []
    expected = []
    for token in doc:
        if token.is_space:
            expected.append([])
            continue
        start = token.idx
        if sentencepiece and start > 0 and doc.text[start - 1].isspace():
            start -= 1
        expected.append([len(offsets) + 1])  # +1: a special token comes first
        offsets.append((start, token.idx + len(token.text)))
    offsets = [(0, 0)] + offsets + [(0, 0)]
    assert token_pieces(doc, offsets) == expected


@given(st.lists(st.tuples(WORDS, WORDS, st.integers(0, 2**16)), min_size=1, max_size=4))
@settings(max_examples=40, deadline=None)
def test_contextdep_highlights_round_trip(tmp_path_factory, pairs):
    """Any words (with empty words) and highlight lists convert with the
    indices kept: token i of a turn is word i, and `all` mode's targets are
    the annotator's highlights."""
    import csv
    import io

    buf = io.StringIO()
    writer = csv.writer(buf, delimiter="\t", lineterminator="\n")  # quotes fields as the release does
    writer.writerow(HEADER.strip("\n").split("\t"))
    expected = []
    for q, (w1, w2, bits) in enumerate(pairs):
        h1 = [(bits >> i) & 1 for i in range(len(w1))]
        h2 = [(bits >> (i + len(w1))) & 1 for i in range(len(w2))]
        label = int(any(h1) and any(h2))
        if not label:
            h1, h2 = [0] * len(w1), [0] * len(w2)
        writer.writerow([f"Q{q}", "A", "S", label, " ".join(w1), str(h1), " ".join(w2), str(h2)])
        expected.append((w1, w2, h1 + h2))
    path = tmp_path_factory.mktemp("prop") / "p.tsv"
    path.write_text(buf.getvalue(), encoding="utf-8")
    docs, _ = convert_contextdep(path, spacy.blank("en").vocab, mode="all")
    assert len(docs) == len(pairs)
    for doc, (w1, w2, hl) in zip(docs, expected):
        first, second = doc.spans["turns"]
        assert len(first) == len(w1) and len(second) == len(w2)
        assert doc.text[first.start_char : first.end_char] == " ".join(w1)
        assert doc.spans["paraphrase"].attrs["token_targets"] == [float(x) for x in hl]
        for w, t in zip(w1 + w2, doc):
            assert t.text == (w or " ")
