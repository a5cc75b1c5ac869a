"""``validate plan``: the predicted half-widths by hand on a two-stratum
corpus, the plan's n against the intervals ``validate score`` then gives on
simulated sheets, and the command."""
import math

import numpy
import pytest
from typer.testing import CliRunner

from spacy_paraphrase.cli import app
from spacy_paraphrase.validation.estimators import StratifiedSample
from spacy_paraphrase.validation.plan import Z, cells, half_widths, plan
from spacy_paraphrase.validation.sheet import draw, stratum
from tests.report.helpers import corpus, failed, write_records


def _two_strata():
    # 500 pairs the model calls "no" (score 0.1: a 10% chance of a paraphrase), 500 it calls "yes" (0.5)
    return ([{"pair_id": f"a{i}", "score": 0.1, "is_paraphrase": False, "margin": -0.4} for i in range(500)]
            + [{"pair_id": f"b{i}", "score": 0.5, "is_paraphrase": True, "margin": 0.1} for i in range(500)])


def test_half_widths_by_hand():
    c = cells(_two_strata(), "decision", None)
    got = half_widths(c, {"not paraphrase": 131, "paraphrase": 131})
    # rate: sum_h W_h^2 pi_h (1 - pi_h) / n_h
    assert got["rate"] == pytest.approx(Z * math.sqrt(0.25 * 0.09 / 131 + 0.25 * 0.25 / 131))
    # precision: the "yes" stratum's share alone
    assert got["precision"] == pytest.approx(Z * math.sqrt(0.25 / 131))
    # recall R = 250 / 300: u = y (d - R); V = sum_h N_h^2 / n_h Var_h(u) / (expected positives)^2
    r = 250 / 300
    var = (500 ** 2 / 131 * r ** 2 * 0.09 + 500 ** 2 / 131 * (1 - r) ** 2 * 0.25) / 300 ** 2
    assert got["recall"] == pytest.approx(Z * math.sqrt(var))
    # the stated prior instead of the scores: the model wrong for 20% of each stratum
    stated = half_widths(cells(_two_strata(), "decision", 0.2), {"not paraphrase": 131, "paraphrase": 131})
    assert stated["rate"] == pytest.approx(Z * math.sqrt(0.25 * 0.16 / 131 * 2))


def test_the_plan_is_the_smallest_n_that_reaches_the_target():
    out = plan(_two_strata(), 0.05, stratify="decision")
    # n = 262: 131 + 131 gives 0.04993; 261 (131 + 130) gives 0.05007
    assert out["reachable"] and out["n"] == 262 and [s["sample"] for s in out["strata"]] == [131, 131]
    assert out["half_widths"]["rate"] <= 0.05
    assert plan(_two_strata(), 0.05, stratify="decision", deff=2.0)["n"] > 500  # conversations that differ: more
    unreachable = plan(_two_strata(), 0.005, stratify="decision")
    assert not unreachable["reachable"] and unreachable["n"] == 1000


def test_the_planned_sheets_give_the_planned_interval():
    # a calibrated model (a pair is a paraphrase with the chance its score says): the prior is right,
    # and the intervals validate score gives on sheets of the planned size are as wide as planned
    rng = numpy.random.default_rng(0)
    scores = rng.beta(0.6, 0.9, 4000)
    records = [{"pair_id": f"p{i}", "conversation_id": f"p{i}", "score": float(s), "is_paraphrase": bool(s >= 0.5),
                "margin": float(s - 0.5)} for i, s in enumerate(scores)]
    truth = (rng.random(4000) < scores).astype(float)
    out = plan(records, 0.05)
    assert 100 < out["n"] < 1000
    strata = [stratum(r, "margin") for r in records]
    row = {r["pair_id"]: i for i, r in enumerate(records)}
    widths = []
    for seed in range(40):
        sample, _ = draw(records, out["n"], "margin", seed)
        coded = [row[r["pair_id"]] for r in sample]
        est = StratifiedSample([r["conversation_id"] for r in records], strata, [float(r["is_paraphrase"])
                               for r in records], coded).estimate(truth[coded], n_boot=300, seed=seed)
        widths.append((est["rate"]["high"] - est["rate"]["low"]) / 2)
    assert numpy.mean(widths) == pytest.approx(0.05, rel=0.15)


def test_plan_command(tmp_path):
    path = write_records(tmp_path / "r.jsonl", corpus(40, 10))
    result = CliRunner().invoke(app, ["validate", "plan", str(path), "--half-width", "0.1"])
    assert result.exit_code == 0, result.output
    assert "Code " in result.output and "--n " in result.output
    result = CliRunner().invoke(app, ["validate", "plan", str(path), "--half-width", "0.1", "--for", "f1"])
    assert "--for 'f1': choose one of rate, precision, recall" in failed(result)
    result = CliRunner().invoke(app, ["validate", "plan", str(path), "--half-width", "5"])
    assert "--half-width must be between 0 and 1" in failed(result)


def test_plan_messages_are_one_line_in_a_pipe(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    path = write_records(tmp_path / "r.jsonl", corpus(40, 10))
    env = dict(os.environ, COLUMNS="40", PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    proc = subprocess.run([sys.executable, "-m", "spacy_paraphrase", "validate", "plan", str(path), "--half-width",
                           "0.1"], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    line = [l for l in proc.stdout.splitlines() if "Code " in l]
    assert len(line) == 1 and "validate sheet RECORDS -o coding/sheet.csv --n" in line[0] and "\x1b" not in proc.stdout
