"""The word-level figures of ``validate score`` against an independent
computation (plain loops, the textbook coincidence matrix) on coded files with
known answers, weighted by a stratified design."""
import json

import numpy
import pytest
from typer.testing import CliRunner

from spacy_paraphrase.cli import app
from spacy_paraphrase.validation.scoring import score_sheets
from spacy_paraphrase.validation.word_scores import alpha_of_totals, pair_values
from spacy_paraphrase.validation.coded import read_coded_files
from spacy_paraphrase.validation.words import model_words, turn_words
from tests.report.helpers import corpus, write_records
from tests.validation.coded_files import coded_file, sheet_rows

runner = CliRunner()
CODERS = ("ann", "bo", "cy")


def textbook_alpha(matrix: numpy.ndarray) -> float:
    """Nominal Krippendorff's alpha from the coincidence matrix (coders x units, NaN missing)."""
    values = sorted(set(matrix[~numpy.isnan(matrix)]))
    o = numpy.zeros((len(values), len(values)))
    for unit in matrix.T:
        got = [values.index(v) for v in unit if not numpy.isnan(v)]
        if len(got) < 2:
            continue
        for a in range(len(got)):
            for b in range(len(got)):
                if a != b:
                    o[got[a], got[b]] += 1 / (len(got) - 1)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    observed = o.sum() - numpy.trace(o)
    expected = (n_c.sum() ** 2 - (n_c ** 2).sum()) / (n - 1)
    return 1 - observed / expected


def make_codes(rows, seed=0):
    """Three coders' random codes of the sheet's pairs (each skips a few)."""
    rng = numpy.random.default_rng(seed)
    codes = {}
    for coder in CODERS:
        mine = {}
        for row in rows:
            if rng.random() < 0.1:
                continue
            n1, n2 = len(turn_words(row["first_text"])), len(turn_words(row["second_text"]))
            if rng.random() < 0.6:
                first = sorted(rng.choice(n1, rng.integers(1, 4), replace=False).tolist())
                second = sorted(rng.choice(n2, rng.integers(1, 3), replace=False).tolist())
                mine[row["pair_id"]] = (True, first, second)
            else:
                mine[row["pair_id"]] = (False, [], [])
        codes[coder] = mine
    return codes


@pytest.fixture(scope="module")
def coded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("words")
    records = corpus(12, 8, seed=3)
    path = write_records(tmp / "r.jsonl", records)
    result = runner.invoke(app, ["validate", "sheet", str(path), "-o", str(tmp / "c" / "sheet.csv"), "--n", "40"])
    assert result.exit_code == 0, result.output
    design = json.loads((tmp / "sheet.design.json").read_text())
    rows = sheet_rows(tmp / "c" / "sheet.csv")
    codes = make_codes(rows)
    files = [coded_file(tmp / f"{c}.json", rows, codes[c], c, design["sheet_id"]) for c in CODERS]
    return {"records": records, "path": path, "design": design, "design_path": tmp / "sheet.design.json",
            "rows": rows, "codes": codes, "files": files}


def expected(coded):
    """The word-level figures computed here, independently."""
    by_id = {r["pair_id"]: r for r in coded["records"]}
    design, codes = coded["design"], coded["codes"]
    items = sorted({pid for c in codes.values() for pid in c})
    strata = {pid: design["pairs"][pid] for pid in items}
    n_h = {h: sum(1 for pid in items if strata[pid] == h) for h in set(strata.values())}
    weight = {pid: design["strata"][strata[pid]]["population"] / n_h[strata[pid]] for pid in items}
    tp = m = g = 0.0
    jac = {"first": [0.0, 0.0], "second": [0.0, 0.0]}
    columns = []
    for pid in items:
        record = by_id[pid]
        w = weight[pid]
        yes = [codes[c][pid] for c in CODERS if pid in codes[c] and codes[c][pid][0]]
        for s, side in enumerate(("first", "second")):
            size = len(turn_words(record[side]["text"]))
            gold = {i for i in range(size) if yes and 2 * sum(i in code[1 + s] for code in yes) >= len(yes)}
            model = model_words(record, side)
            tp, m, g = tp + w * len(gold & model), m + w * len(model), g + w * len(gold)
            if gold and model:
                jac[side][0] += w * len(gold & model) / len(gold | model)
                jac[side][1] += w
            if len(yes) >= 2:
                for i in range(size):
                    columns.append([float(i in codes[c][pid][1 + s]) if pid in codes[c] and codes[c][pid][0]
                                    else numpy.nan for c in CODERS])
    return {"precision": tp / m, "recall": tp / g, "f1": 2 * tp / (m + g),
            "jaccard_first": jac["first"][0] / jac["first"][1], "jaccard_second": jac["second"][0] / jac["second"][1],
            "krippendorff_alpha": textbook_alpha(numpy.asarray(columns).T), "words": len(columns)}


def test_word_figures_equal_an_independent_computation(coded):
    scores = score_sheets(coded["files"], [coded["path"]], design=coded["design_path"], n_boot=400)
    words = scores["words"]
    want = expected(coded)
    got = dict(words["model_vs_majority"], krippendorff_alpha=words["agreement"]["krippendorff_alpha"])
    for key in ("precision", "recall", "f1", "jaccard_first", "jaccard_second", "krippendorff_alpha"):
        assert got[key]["value"] == pytest.approx(want[key], abs=1e-9), key
        assert got[key]["low"] is not None and got[key]["low"] <= got[key]["value"] <= got[key]["high"], key
    assert words["agreement"]["krippendorff_alpha"]["words"] == want["words"]
    assert words["coders"] == list(CODERS) and words["pairs"] == 40
    assert scores["coders"] == list(CODERS) and scores["pairs_coded"] == 40


def test_the_resamples_alpha_from_totals_is_krippendorffs(coded):
    files = read_coded_files(coded["files"])
    by_id = {r["pair_id"]: r for r in coded["records"]}
    parts = [pair_values(files, by_id[pid], pid) for pid in by_id if any(pid in f.pairs for f in files)]
    o, n0, n1 = (numpy.asarray([sum(p[k] for p in parts)]) for k in ("o", "n0", "n1"))
    assert alpha_of_totals(o, n0, n1)[0] == pytest.approx(expected(coded)["krippendorff_alpha"], abs=1e-9)


def test_the_word_figures_are_printed_and_in_the_report_section(coded, tmp_path):
    from spacy_paraphrase.report.validation_section import validation_section

    out = tmp_path / "s.json"
    result = runner.invoke(app, ["validate", "score", *map(str, coded["files"]), "-r", str(coded["path"]),
                                 "--design", str(coded["design_path"]), "--n-boot", "200", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "Krippendorff's alpha on words" in result.output and "token f1" in result.output
    assert "Jaccard with the coders' words, second turn" in result.output
    page = validation_section(json.loads(out.read_text()), out)
    assert "Jaccard with the coders&#x27; words, first turn" in page and "at least half of the coders" in page


def test_the_word_intervals_cover_the_true_figures_of_93_to_97_percent_of_sheets():
    # as the rate's simulation (test_scoring.py): 500 seeded corpora of 80 conversations of 12 pairs whose
    # conversations differ (each its own precision, recall and Jaccard), a sheet of 300 pairs drawn by
    # 'validate sheet' (margin strata), the figures and intervals from the coded pairs' word counts
    from spacy_paraphrase.validation.estimators import StratifiedSample
    from spacy_paraphrase.validation.sheet import draw, stratum
    from spacy_paraphrase.validation.word_scores import figures
    from tests.validation.test_scoring import _records

    truth = {"precision": 0.6, "jaccard_first": 0.4}  # the means of the conversations' own figures
    covered = {key: 0 for key in truth}
    for seed in range(500):
        rng = numpy.random.default_rng(seed)
        records, _ = _records(rng, 80, 12, 0.3)
        k = 80
        conv = numpy.repeat(numpy.arange(k), 12)
        p_c, j_c = (rng.beta(6 * t, 6 * (1 - t), k) for t in truth.values())
        model = 1 + rng.poisson(3, len(conv))  # E[tp] / E[model] = E[p_c]
        tp = rng.binomial(model, p_c[conv])
        gold = tp + 1
        both = (rng.random(len(conv)) < 0.7).astype(float)
        jac = rng.beta(8 * j_c[conv], 8 * (1 - j_c[conv]))
        sample, _ = draw(records, 300, "margin", seed)
        row = {r["pair_id"]: i for i, r in enumerate(records)}
        coded = [row[r["pair_id"]] for r in sample]
        strata = [stratum(r, "margin") for r in records]
        values = {"tp": tp[coded], "model": model[coded], "gold": gold[coded], "jaccard_first": (jac * both)[coded],
                  "both_first": both[coded], "jaccard_second": both[coded], "both_second": both[coded],
                  "o": numpy.zeros(300), "n0": numpy.zeros(300), "n1": numpy.zeros(300)}
        _, draws = StratifiedSample([r["conversation_id"] for r in records], strata,
                                        [float(r["is_paraphrase"]) for r in records], coded).totals(
            values, n_boot=400, seed=seed)
        at = figures(draws)
        for key, true in truth.items():
            low, high = numpy.quantile(at[key], [0.025, 0.975])
            covered[key] += low <= true <= high
    for key in truth:
        assert 0.93 <= covered[key] / 500 <= 0.97, (key, covered[key])
