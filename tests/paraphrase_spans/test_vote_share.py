"""The vote share map (paraphrase_spans/vote_share.py): fitted to annotator votes, stored
in the component's cfg, applied by the readout; agreement and its measures."""
import numpy
import pytest

from spacy_paraphrase import make_pair_doc
from spacy_paraphrase.paraphrase_spans.readout import Readout
from spacy_paraphrase.paraphrase_spans.vote_share import (
    VoteShareMap, agreement_of_share, annotator_agreement, fit_vote_share, pair_features, share_scores,
)


def test_agreement_formulas():
    assert agreement_of_share(0.5) == 0.5 and agreement_of_share(1.0) == 1.0
    assert agreement_of_share(0.2) == pytest.approx(0.68)
    # 3 of 4 said yes: of the 6 annotator pairs, 3 agree (the yes-yes pairs)
    assert annotator_agreement(3, 4) == pytest.approx(0.5)
    assert annotator_agreement(5, 5) == 1.0 and annotator_agreement(1, 1) is None


def test_fit_recovers_a_known_map():
    rng = numpy.random.default_rng(0)
    rows = [{"pair_score": float(p)} for p in rng.uniform(0.02, 0.98, 400)]
    true = VoteShareMap(["pair_score"], [1.5], -0.5)
    shares = true.predict(rows)
    votes = [(int(rng.binomial(20, s)), 20) for s in shares]
    fitted = fit_vote_share(rows, votes, features=["pair_score"], l2=0.0)
    assert fitted.coef[0] == pytest.approx(1.5, abs=0.25) and fitted.intercept == pytest.approx(-0.5, abs=0.25)
    scores = share_scores(list(fitted.predict(rows)), votes, "x")
    assert scores["x_vote_share_pearson"] > 0.8 and scores["x_vote_share_ece"] < 0.05
    # a constant prediction has no correlation to report, but an error
    flat = share_scores([0.5] * len(votes), votes, "x")
    assert flat["x_vote_share_pearson"] is None and flat["x_vote_share_mae"] > 0.05


def test_fit_needs_votes():
    with pytest.raises(ValueError, match="at least two pairs"):
        fit_vote_share([{"pair_score": 0.5}] * 3, [(0, 0), (1, 2), (0, 0)], features=["pair_score"])


def test_readout_applies_the_map_and_validates_it(nlp):
    doc = make_pair_doc(nlp, ["a", "b"], ["c"])
    probs = numpy.array([0.2, 0.6, 0.4], dtype="float32")
    assert pair_features(doc, probs)["pair_score"] == pytest.approx(0.4)
    assert pair_features(doc, probs)["first_top3"] == pytest.approx(0.4)
    share_map = VoteShareMap(["pair_score", "second_max"], [1.0, 0.5], 0.3)
    r = Readout(threshold=0.3, vote_share_map=share_map.to_cfg())
    r.annotate(doc, probs)
    attrs = doc.spans["paraphrase"].attrs
    logit = numpy.log(0.4 / 0.6)
    expected = 1 / (1 + numpy.exp(-(0.3 + 1.5 * logit)))
    assert attrs["vote_share"] == pytest.approx(expected)
    assert attrs["agreement"] == pytest.approx(agreement_of_share(expected))
    assert attrs["pair_score"] == pytest.approx(0.4) and attrs["margin"] == pytest.approx(0.1)
    assert Readout.from_cfg(r.to_cfg()) == r
    for bad in ({"coef": [1.0]}, {"features": ["nope"], "coef": [1.0], "intercept": 0.0},
                {"features": ["pair_score"], "coef": [float("nan")], "intercept": 0.0}):
        with pytest.raises(ValueError, match="vote_share_map"):
            Readout(vote_share_map=bad)


def test_a_map_records_its_pair_score_rule_and_warns_when_loaded_under_another():
    """A map fitted under one pair-score rule (pair_score.py) is stale under another:
    it says so when a readout with another rule takes it instead of silently
    mapping another score. Maps saved before rules were registered recorded the
    default rule as "min_turn_max.v1" (or nothing): the same rule."""
    import warnings

    from spacy_paraphrase.paraphrase_spans.pair_score import DEFAULT_RULE
    from spacy_paraphrase.paraphrase_spans.vote_share import UNRECORDED_RULE, StaleVoteShareMap

    top3 = "spacy_paraphrase.min_turn_top3_mean.v1"
    rows = [{"pair_score": p} for p in (0.1, 0.4, 0.7, 0.9)]
    fitted = fit_vote_share(rows, [(0, 4), (1, 4), (3, 4), (4, 4)], features=["pair_score"])
    cfg = fitted.to_cfg()
    assert cfg["pair_score_rule"] == DEFAULT_RULE
    assert VoteShareMap.from_cfg(cfg).pair_score_rule == DEFAULT_RULE
    older = {k: v for k, v in cfg.items() if k != "pair_score_rule"}  # saved before maps recorded it
    assert VoteShareMap.from_cfg(older).pair_score_rule == UNRECORDED_RULE == "min_turn_max.v1"
    with warnings.catch_warnings():
        warnings.simplefilter("error", StaleVoteShareMap)
        Readout(vote_share_map=cfg)  # the rule it was fitted with: silent
        Readout(vote_share_map=older)
        Readout(vote_share_map=dict(cfg, pair_score_rule="min_turn_max.v1"))
    for saved in (cfg, older):
        with pytest.warns(StaleVoteShareMap, match=r"fitted with the pair-score rule '[\w.]+', this readout "
                                                    r"computes 'spacy_paraphrase\.min_turn_top3_mean\.v1'.*"
                                                    r"tune --key vote_share"):
            Readout(vote_share_map=saved, pair_score_rule=top3)
    with warnings.catch_warnings(record=True) as caught:  # once per readout, not once per Doc's map
        warnings.simplefilter("always")
        stale = Readout(vote_share_map=cfg, pair_score_rule=top3)
        for _ in range(3):
            VoteShareMap.from_cfg(stale.vote_share_map)
    assert [w.category for w in caught] == [StaleVoteShareMap]
    refit = fit_vote_share(rows, [(0, 4), (1, 4), (3, 4), (4, 4)], pair_score_rule=top3).to_cfg()
    assert refit["pair_score_rule"] == top3
    with warnings.catch_warnings():
        warnings.simplefilter("error", StaleVoteShareMap)
        Readout(vote_share_map=refit, pair_score_rule=top3)
    with pytest.raises(ValueError, match="pair_score_rule must be a string"):
        Readout(vote_share_map=dict(cfg, pair_score_rule=2))
    with pytest.raises(ValueError, match="vote_share_map"):
        Readout(vote_share_map=dict(cfg, other=1))
