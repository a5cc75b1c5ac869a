"""The pair score is one rule (paraphrase_spans/pair_score.py) read by the
readout's decision, the pair loss's token and the vote-share features."""
import numpy
import spacy

from spacy_paraphrase import make_pair_doc
from spacy_paraphrase.paraphrase_spans.component import _pair_score_token
from spacy_paraphrase.paraphrase_spans.model import TokenScores
from spacy_paraphrase.paraphrase_spans.pair_score import pair_score_and_token, turn_maxima
from spacy_paraphrase.paraphrase_spans.readout import Readout
from spacy_paraphrase.paraphrase_spans.vote_share import pair_features


def test_every_reader_of_the_pair_score_reads_the_one_rule():
    nlp = spacy.blank("en")
    doc = make_pair_doc(nlp, ["a", "b", "c"], ["d", "e"])
    probs = numpy.array([0.2, numpy.nan, 0.7, 0.4, 0.3], dtype="float32")
    assert turn_maxima(doc, probs) == [(numpy.float32(0.7), 2), (numpy.float32(0.4), 3)]
    score, token = pair_score_and_token(doc, probs)
    assert (score, token) == (numpy.float32(0.4), 3)
    assert Readout().pair_score(doc, probs) == score
    assert pair_features(doc, probs)["pair_score"] == score
    scores = TokenScores(probs=probs, n_pieces=numpy.array([1, 0, 1, 1, 1], dtype="int32"),
                         cut=numpy.array([False, False, False, False, False]))
    assert _pair_score_token(doc, scores) == token
    # a cut token is not read; a turn with nothing scored gives 0 and no token
    scores.cut[3] = True
    assert _pair_score_token(doc, scores) == 4
    nothing = numpy.array([0.2, 0.1, 0.7, numpy.nan, numpy.nan], dtype="float32")
    assert pair_score_and_token(doc, nothing) == (0.0, None)
    assert Readout().pair_score(doc, nothing) == 0.0
