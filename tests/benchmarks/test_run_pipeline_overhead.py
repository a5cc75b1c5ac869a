"""benchmarks.run_pipeline_overhead: one run on a few generated pairs writes
the pipeline's and the bare forward's throughput, their ratio, annotate's and
training's, with no machine paths (the speed itself is never asserted)."""
import json

import pytest

from benchmarks import run_pipeline_overhead as bench


def test_a_small_run_writes_every_figure_and_no_machine_path(tmp_path):
    out = tmp_path / "overhead.json"
    assert bench.main(["--data", str(tmp_path / "missing.tsv"), "--pairs", "24", "--batch", "8",
                       "--rounds", "1", "--threads", "1", "--annotate", "--train-steps", "2",
                       "--output", str(out)]) == 0
    result = json.loads(out.read_text(encoding="utf8"))
    assert result["pair_source"] == "generated" and result["pairs"] == 24
    assert set(result["pairs_per_s"]) == {"pipeline", "bare"}
    assert result["pipeline_over_bare"] == pytest.approx(result["pairs_per_s"]["pipeline"] / result["pairs_per_s"]["bare"])
    assert result["annotate"]["records_per_s"] > 0
    assert result["train"]["steps"] == 2 and result["train"]["plain_loop_steps_per_s"] > 0
    text = out.read_text(encoding="utf8")
    assert str(tmp_path) not in text and "/tmp" not in text and "missing.tsv" in result["command"]


def test_pairs_come_from_contextdep_when_it_is_there(tmp_path):
    tsv = tmp_path / "dev.tsv"
    tsv.write_text("QID\tAnnotator\tSession\tIs Paraphrase\tGuest Tokens\tGuest Highlights\tHost Tokens\tHost Highlights\n"
                   "A-1\tx\tS\t1\ta  b c\t[0, 0, 0, 1]\td e\t[1, 0]\n"
                   "A-1\ty\tS\t0\ta  b c\t[0, 0, 0, 0]\td e\t[0, 0]\n"
                   "A-2\tx\tS\t0\tf\t[0]\tg\t[0]\n", encoding="utf8")
    pairs, source = bench.read_pairs(tsv, 5, 0)
    assert source == "contextdep/dev.tsv"
    assert pairs == [(["a", "", "b", "c"], ["d", "e"]), (["f"], ["g"])] * 2 + [(["a", "", "b", "c"], ["d", "e"])]
