"""End to end on ContextDeP dev: its 88 pairs as annotate records (the score
is the pair's share of "paraphrase" votes, threshold 0.5), its annotators'
votes as coders (one sheet each). The agreement figures of ``validate
score`` must match an independent computation from the TSV. Skipped when
the data is missing."""
import csv
from collections import defaultdict

import pytest

from spacy_paraphrase.report.build import make_report
from spacy_paraphrase.validation.scoring import score_sheets
from tests.report.helpers import write_records
from tests.util import DATA_DIR

DEV = DATA_DIR / "contextdep" / "dev.tsv"


@pytest.fixture(scope="module")
def dev():
    if not DEV.exists():
        pytest.skip(f"ContextDeP dev not found at {DEV}")
    with DEV.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    pairs, votes = {}, defaultdict(dict)
    for row in rows:
        pairs.setdefault(row["QID"], (row["Guest Tokens"], row["Host Tokens"]))
        votes[row["Annotator"]][row["QID"]] = int(row["Is Paraphrase"])
    return pairs, dict(votes)


def _records(pairs, votes):
    out = []
    for qid, (guest, host) in pairs.items():
        said = [v[qid] for v in votes.values() if qid in v]
        share = sum(said) / len(said)
        out.append({"pair_id": qid, "conversation_id": qid.rsplit("-", 1)[0],
                    "first": {"speaker": "GUEST", "utterance_ids": [qid + "g"], "text": guest},
                    "second": {"speaker": "HOST", "utterance_ids": [qid], "text": host},
                    "meta": {"program": qid.split("-")[0]}, "score": share, "is_paraphrase": share >= 0.5,
                    "vote_share": share, "agreement": None, "margin": share - 0.5, "spans": []})
    return out


def _alpha_by_hand(columns):
    """Nominal alpha of 0/1 labels from the coincidence matrix (Krippendorff 2011)."""
    o = [[0.0, 0.0], [0.0, 0.0]]
    for labels in columns:
        m = len(labels)
        if m < 2:
            continue
        for c in (0, 1):
            for k in (0, 1):
                n_c, n_k = labels.count(c), labels.count(k)
                o[c][k] += (n_c * (n_k - (c == k))) / (m - 1)
    n0, n1 = o[0][0] + o[0][1], o[1][0] + o[1][1]
    n = n0 + n1
    return 1 - (n - 1) * (o[0][1] + o[1][0]) / (2 * n0 * n1)


@pytest.mark.slow
def test_dev_annotators_as_coders(dev, tmp_path):
    pairs, votes = dev
    records = write_records(tmp_path / "dev.jsonl", _records(pairs, votes))
    sheets = []
    for annotator, labels in sorted(votes.items()):
        sheets.append(tmp_path / "sheets" / f"{annotator}.csv")
        sheets[-1].parent.mkdir(exist_ok=True)
        sheets[-1].write_text("pair_id,label\n" + "".join(f"{q},{y}\n" for q, y in labels.items()))
    scores = score_sheets(sheets, [records], n_boot=500, tie="not-paraphrase")  # as the paper's gold
    columns = [[v[q] for v in votes.values() if q in v] for q in sorted(pairs)]
    assert scores["pairs_coded"] == 88 and scores["labels"] == 842 and len(scores["coders"]) == len(votes)
    humans = scores["agreement"]["humans"]
    assert humans["krippendorff_alpha"] == pytest.approx(_alpha_by_hand(columns), abs=1e-9)
    agree = sum(k * (k - 1) + (len(c) - k) * (len(c) - k - 1) for c in columns for k in [sum(c)])
    assert humans["percent_agreement"] == pytest.approx(agree / sum(len(c) * (len(c) - 1) for c in columns))
    # the model says yes at a share >= 0.5, the majority at > 0.5: they differ on the ties only
    ties = sum(2 * sum(c) == len(c) for c in columns)
    yes = sum(2 * sum(c) > len(c) for c in columns)
    assert scores["ties"]["pairs"] == ties
    against = scores["model_vs_majority"]
    assert against["recall"]["value"] == 1.0 and against["precision"]["value"] == pytest.approx(yes / (yes + ties))
    n, no = 88, 88 - yes - ties
    p_o, p_e = (yes + no) / n, ((yes + ties) * yes + no * (n - yes)) / n ** 2
    assert scores["agreement"]["model_vs_majority"]["cohen_kappa"] == pytest.approx((p_o - p_e) / (1 - p_e))
    assert scores["rate"]["design_based"]["value"] == pytest.approx(yes / 88)
    # more than two coders: the mean vote is its own figure, the mean of the pairs' vote shares
    assert scores["mean_vote"]["rate"]["value"] == pytest.approx(sum(sum(c) / len(c) for c in columns) / 88)
    # every pair coded: the Rogan-Gladen rate would be the coders' rate again, so it is not reported
    assert "rogan_gladen" not in scores["rate"] and scores["estimator"]["why"].startswith("every pair of the corpus")
    half = score_sheets(sheets, [records], n_boot=200)
    assert half["ties"]["rule"] == "half"
    assert half["rate"]["design_based"]["value"] == pytest.approx((yes + ties / 2) / 88)
    scores_path = tmp_path / "scores.json"
    scores_path.write_text(__import__("json").dumps(scores))
    out = make_report([records], tmp_path / "rep", by=["meta.program"], validation=scores_path, n_boot=300)
    assert out["summary"]["pairs"] == 88 and out["summary"]["conversations"] == 88
    assert "Validation against human coders" in (tmp_path / "rep" / "index.html").read_text(encoding="utf-8")
