"""The ContextDeP paper's metrics (``paraphrase_spans_paper_*``) against an
independent implementation of the authors' evaluation written here from
their code (github.com/nlpsoc/Paraphrases-in-News-Interviews):

- gold words, ``annotation_data.extract_txts_to_compare``: per turn, a word's
  weight is how many annotators highlighted it over ``max(votes, 1)``, votes =
  the annotators whose highlight of that turn is non-empty; then
  ``eval_token_classifier.main``: gold iff weight >= 0.5, on every pair;
- gold pair: yes votes / annotators >= 0.5;
- predicted words: probability >= 0.5 on every pair; predicted pair: some word
  of both turns > 0.5 (``get_tokenclassification_predictions``);
- Jaccard, ``evaluate_icl_responses.jaccard_overlap_from_labels``: per turn,
  the mean |gold & pred| / |gold | pred| over the pairs where both are
  non-empty.

The reference reads the TSV rows itself (csv module) and never calls the
package; the package side goes through the converter and the scorer."""
import csv
import random
from collections import Counter

import numpy
import pytest
from spacy.training import Example

from spacy_paraphrase.converters import convert_contextdep
from tests.util import DATA_DIR, HEADER, row, write_paraphrase_annotations

DEV = DATA_DIR / "contextdep" / "dev.tsv"


# ---- the authors' evaluation, independently --------------------------------

def read_annotations(path):
    """{QID: {"guest": words, "host": words, "rows": [(is_paraphrase, guest_hl, host_hl)]}}."""
    pairs = {}
    with open(path, newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh, delimiter="\t"):
            pair = pairs.setdefault(r["QID"], {"guest": r["Guest Tokens"].split(" "),
                                               "host": r["Host Tokens"].split(" "), "rows": []})
            guest = [int(x) for x in r["Guest Highlights"].strip("[] ").split(",")]
            host = [int(x) for x in r["Host Highlights"].strip("[] ").split(",")]
            pair["rows"].append((int(r["Is Paraphrase"]), guest, host))
    return pairs


def authors_gold(pair, turn, majority_only=False):
    """Gold highlight of one turn (0/1 per word), as extract_txts_to_compare + main.
    ``majority_only``: the rule this project used before (zero unless a majority
    paraphrase) - for checking that the test tells the two apart."""
    index = 1 if turn == "guest" else 2
    choices = [[i + 1 for i, x in enumerate(r[index]) if x == 1] for r in pair["rows"]]
    votes = sum(1 for c in choices if len(c) > 0)
    counted = Counter(i for c in choices for i in c)
    n_words = len(pair[turn])
    weights = [counted[i + 1] / max(votes, 1) if (i + 1) in counted else 0 for i in range(n_words)]
    hl = [1 if w >= 0.5 else 0 for w in weights]
    if majority_only:
        k = sum(r[0] for r in pair["rows"])
        if not k / len(pair["rows"]) >= 0.5:
            hl = [0] * n_words
    return hl


def authors_scores(pairs, probs, majority_only=False):
    """The authors' pair P/R/F (class paraphrase) and per-turn Jaccard;
    ``probs[qid] = (guest word probabilities, host word probabilities)``."""
    human_binary, model_binary = [], []
    jacc = {"guest": [], "host": []}
    for qid, pair in pairs.items():
        k = sum(r[0] for r in pair["rows"])
        human_binary.append(1 if k / len(pair["rows"]) >= 0.5 else 0)
        g_p, h_p = probs[qid]
        model_binary.append(1 if any(p > 0.5 for p in g_p) and any(p > 0.5 for p in h_p) else 0)
        for turn, p in (("guest", g_p), ("host", h_p)):
            human = authors_gold(pair, turn, majority_only)
            model = [1 if w >= 0.5 else 0 for w in p]
            if human.count(1) > 0 and model.count(1) > 0:
                h_set = {i for i, x in enumerate(human) if x == 1}
                m_set = {i for i, x in enumerate(model) if x == 1}
                jacc[turn].append(len(h_set & m_set) / len(h_set | m_set))
    tp = sum(1 for h, m in zip(human_binary, model_binary) if h and m)
    fp = sum(1 for h, m in zip(human_binary, model_binary) if not h and m)
    fn = sum(1 for h, m in zip(human_binary, model_binary) if h and not m)
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return {
        "p": p, "r": r, "f": 2 * p * r / (p + r) if p + r else 0.0,
        "acc": sum(h == m for h, m in zip(human_binary, model_binary)) / len(human_binary),
        "first": sum(jacc["guest"]) / len(jacc["guest"]) if jacc["guest"] else None,
        "second": sum(jacc["host"]) / len(jacc["host"]) if jacc["host"] else None,
        "first_n": len(jacc["guest"]), "second_n": len(jacc["host"]),
    }


# ---- the package ------------------------------------------------------------

def package_scores(path, probs, vocab, **readout):
    """Convert ``path`` (majority mode), write ``probs`` on copies of the Docs as
    the component would (``readout`` settings) and score them."""
    from spacy_paraphrase.paraphrase_spans.scorer import score_paraphrase_spans

    refs, _ = convert_contextdep(path, vocab, mode="majority")
    examples = []
    for ref in refs:
        qid = ref.spans["turns"].attrs["id"]
        pred = ref.copy()  # the same tokens and turns, no gold: the component writes these
        del pred.spans["paraphrase"]
        pred.cats = {}
        token_p = numpy.full((len(pred),), numpy.nan, dtype="float32")
        for turn, p in zip(ref.spans["turns"], probs[qid]):
            assert len(turn) == len(p)  # one token per word of the release, empty words too
            token_p[turn.start : turn.end] = p
        write_paraphrase_annotations(pred, token_p, **readout)
        examples.append(Example(pred, ref))
    return score_paraphrase_spans(examples, name="x", **readout)


def assert_equal_to_authors(scores, expected):
    for key in ("p", "r", "f", "acc"):
        assert scores[f"x_paper_pair_{key}"] == pytest.approx(expected[key], abs=1e-9), key
    for key in ("first", "second"):
        assert scores[f"x_paper_jaccard_{key}_n"] == expected[f"{key}_n"], key
        if expected[key] is None:
            assert scores[f"x_paper_jaccard_{key}"] is None
        else:
            assert scores[f"x_paper_jaccard_{key}"] == pytest.approx(expected[key], abs=1e-9), key


def f32(values):
    """Probabilities as the model stores them (float32), as Python floats (the authors' ``.item()``)."""
    return [float(x) for x in numpy.asarray(values, dtype="float32")]


# ---- (a) a hand-made fixture ---------------------------------------------------

G, H = "a b c d", "e f g h i"


def _rows(qid, votes, guest=G, host=H):
    """One row per annotator: ``votes`` = [(guest highlight, host highlight)], None = says no."""
    out = []
    for i, v in enumerate(votes):
        ng, nh = len(guest.split(" ")), len(host.split(" "))
        g, h = v if v is not None else ([0] * ng, [0] * nh)
        out.append(row(qid, f"A{i}", int(v is not None), guest, g, host, h))
    return out


FIXTURE = (
    # majority paraphrase, 3 of 4: words by >= 2 of 3 (a tie is gold: 2 * count >= k)
    _rows("P1", [([1, 1, 0, 0], [1, 1, 0, 0, 0]), ([1, 0, 0, 0], [0, 1, 1, 0, 0]),
                 ([0, 1, 1, 0], [1, 1, 0, 0, 0]), None])
    # NOT a majority paraphrase (1 of 3) with a yes vote: gold words of the one voter
    + _rows("N1", [([0, 0, 1, 1], [0, 0, 0, 1, 1]), None, None])
    # NOT a majority paraphrase (2 of 5): words by >= 1 of 2
    + _rows("N2", [([1, 0, 0, 0], [0, 0, 1, 0, 0]), ([1, 1, 0, 0], [0, 0, 0, 0, 1]), None, None, None])
    # a tie (2 of 4) is a paraphrase
    + _rows("T1", [([0, 0, 0, 1], [1, 0, 0, 0, 0]), ([0, 0, 1, 1], [0, 0, 0, 0, 1]), None, None])
    # majority paraphrase, but the model highlights nothing: no Jaccard
    + _rows("P2", [([1, 1, 1, 1], [1, 1, 1, 1, 1]), ([1, 1, 1, 1], [1, 1, 1, 1, 1])])
    # no yes vote: empty gold, the model highlights: no Jaccard
    + _rows("E1", [None, None, None])
    # NOT a majority paraphrase (1 of 4), the model highlights only the first turn
    + _rows("N3", [([0, 1, 1, 0], [1, 0, 0, 0, 0]), None, None, None])
    # an empty word (double space) in the first turn
    + _rows("W1", [([1, 0, 1, 0], [0, 0, 0, 1, 1]), ([1, 0, 0, 1], [0, 0, 0, 1, 0])], guest="a  c d")
)

FIXTURE_PROBS = {
    # 0.5 exactly: highlighted (>= 0.5) but never makes a pair (> 0.5)
    "P1": (f32([0.9, 0.5, 0.2, 0.1]), f32([0.7, 0.3, 0.6, 0.1, 0.1])),
    "N1": (f32([0.1, 0.8, 0.7, 0.55]), f32([0.1, 0.1, 0.2, 0.95, 0.1])),
    "N2": (f32([0.6, 0.6, 0.6, 0.1]), f32([0.1, 0.1, 0.51, 0.49, 0.1])),
    "T1": (f32([0.5, 0.1, 0.1, 0.5]), f32([0.9, 0.1, 0.1, 0.1, 0.1])),
    "P2": (f32([0.49, 0.3, 0.2, 0.1]), f32([0.4, 0.3, 0.2, 0.1, 0.1])),
    "E1": (f32([0.9, 0.9, 0.1, 0.1]), f32([0.1, 0.6, 0.6, 0.1, 0.1])),
    "N3": (f32([0.1, 0.7, 0.6, 0.55]), f32([0.4, 0.2, 0.1, 0.1, 0.1])),
    "W1": (f32([0.8, 0.6, 0.7, 0.2]), f32([0.1, 0.1, 0.1, 0.9, 0.6])),
}


@pytest.fixture
def fixture_tsv(tmp_path):
    path = tmp_path / "fixture.tsv"
    path.write_text(HEADER + "".join(FIXTURE), encoding="utf-8")
    return path


@pytest.mark.parametrize("readout", [
    {"threshold": 0.5, "highlight_threshold": 0.5},
    # the pipeline's own settings do not move the paper's metrics
    {"threshold": 0.3, "highlight_threshold": 0.25, "highlight_scale": "turn_max", "max_gap": 1},
])
def test_paper_metrics_equal_the_authors_on_a_fixture(fixture_tsv, nlp, readout):
    scores = package_scores(fixture_tsv, FIXTURE_PROBS, nlp.vocab, **readout)
    expected = authors_scores(read_annotations(fixture_tsv), FIXTURE_PROBS)
    # the fixture has every case: pairs left out of each average, pairs that are
    # not majority paraphrases with gold words in it
    assert (expected["first_n"], expected["second_n"]) == (6, 5)
    assert_equal_to_authors(scores, expected)


def test_the_fixture_tells_the_paper_from_majority_only_gold(fixture_tsv, nlp):
    """A scorer that went back to majority-only gold words would fail the test above."""
    pairs = read_annotations(fixture_tsv)
    paper = authors_scores(pairs, FIXTURE_PROBS)
    majority = authors_scores(pairs, FIXTURE_PROBS, majority_only=True)
    assert paper["first_n"] > majority["first_n"] and paper["second_n"] > majority["second_n"]
    assert abs(paper["first"] - majority["first"]) > 1e-3 and abs(paper["second"] - majority["second"]) > 1e-3
    # and this project's own Jaccard at a fixed absolute 0.5 is the majority-only one
    scores = package_scores(fixture_tsv, FIXTURE_PROBS, nlp.vocab, threshold=0.5, highlight_threshold=0.5)
    assert scores["x_jaccard_first_abs50"] == pytest.approx(majority["first"], abs=1e-9)
    assert scores["x_jaccard_second_abs50"] == pytest.approx(majority["second"], abs=1e-9)


def test_hand_computed_paper_scores(fixture_tsv, nlp):
    """A few values by hand, so the reference above is checked too."""
    scores = package_scores(fixture_tsv, FIXTURE_PROBS, nlp.vocab, threshold=0.5, highlight_threshold=0.5)
    # gold pairs: P1 P2 T1 W1; predicted (a word of both turns > 0.5): P1 N1 N2 E1 W1
    # (T1's first turn tops out at 0.5 exactly: not > 0.5)
    assert scores["x_paper_pair_p"] == pytest.approx(2 / 5)
    assert scores["x_paper_pair_r"] == pytest.approx(2 / 4)
    # first turn, over P1 1, N1 2/3, N2 2/3, T1 1/3 (0.5 counts as a highlight), N3 2/3, W1 2/4
    assert scores["x_paper_jaccard_first"] == pytest.approx((1 + 2 / 3 + 2 / 3 + 1 / 3 + 2 / 3 + 1 / 2) / 6)
    assert scores["x_paper_jaccard_first_n"] == 6
    # N1, first turn: gold {c, d}, predicted {b, c, d}: 2/3
    pairs = read_annotations(fixture_tsv)
    assert authors_gold(pairs["N1"], "guest") == [0, 0, 1, 1]
    # P1: gold guest {a, b} (2 and 2 of 3), predicted {a, b} (0.5 counts): 1
    assert authors_gold(pairs["P1"], "guest") == [1, 1, 0, 0]


def test_paper_keys_are_none_without_annotator_counts(nlp):
    from spacy_paraphrase import make_pair_doc
    from spacy_paraphrase.paraphrase_spans.scorer import score_paraphrase_spans

    pred = make_pair_doc(nlp, ["a", "b"], ["c", "d"])
    write_paraphrase_annotations(pred, numpy.asarray([0.9, 0.1, 0.9, 0.1], dtype="float32"))
    ref = make_pair_doc(nlp, ["a", "b"], ["c", "d"])
    ref.spans["paraphrase"] = [ref[0:1], ref[2:3]]
    ref.cats["PARAPHRASE"] = 1.0
    scores = score_paraphrase_spans([Example(pred, ref)], name="x")
    assert scores["x_paper_pair_f"] is None and scores["x_paper_jaccard_first"] is None
    assert scores["x_pair_f"] == 1.0


# ---- (b) ContextDeP dev ----------------------------------------------------------

def seeded_probs(pairs, seed=0):
    """Deterministic probabilities per word: a seeded generator per pair, some
    pairs sparse and some dense, a few exactly 0.5."""
    out = {}
    for qid, pair in pairs.items():
        rng = random.Random(f"{seed}-{qid}")
        power = rng.choice([0.5, 1.0, 3.0, 8.0])
        turns = []
        for turn in ("guest", "host"):
            values = [0.5 if rng.random() < 0.03 else rng.random() ** power for _ in pair[turn]]
            turns.append(f32(values))
        out[qid] = tuple(turns)
    return out


@pytest.mark.skipif(not DEV.exists(), reason=f"ContextDeP dev is not at {DEV}")
@pytest.mark.parametrize("seed", [0, 1])
def test_paper_metrics_equal_the_authors_on_contextdep_dev(nlp, seed):
    pairs = read_annotations(DEV)
    assert len(pairs) == 88
    # 19 dev pairs are not majority paraphrases but have a yes vote: their gold
    # words count in the paper's Jaccard
    assert sum(1 for p in pairs.values() if 0 < sum(r[0] for r in p["rows"]) < len(p["rows"]) / 2) == 19
    probs = seeded_probs(pairs, seed)
    scores = package_scores(DEV, probs, nlp.vocab, threshold=0.5, highlight_threshold=0.5)
    expected = authors_scores(pairs, probs)
    assert_equal_to_authors(scores, expected)
    majority = authors_scores(pairs, probs, majority_only=True)
    assert expected["first_n"] > majority["first_n"]
