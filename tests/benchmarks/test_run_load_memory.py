"""benchmarks.run_load_memory: every step measured in its own process, as
ratios to the weights, the two save formats giving the same probabilities."""
from pathlib import Path

import pytest

from benchmarks import run_load_memory
from tests.util import DEBERTA_TOKENIZER, skip_optional


def test_a_step_reports_the_childs_own_peak_not_this_process(tmp_path):
    if not Path(run_load_memory.TIME).is_file():
        skip_optional("GNU time (/usr/bin/time) is not installed")
    import sys

    small = run_load_memory.run_peak([sys.executable, "-c", "print(1)"], "small")
    big = run_load_memory.run_peak([sys.executable, "-c", "b = bytearray(300 * 2**20); b[::4096] = b'x' * len(b[::4096]); print(2)"], "big")
    assert small["stdout"] == "1" and big["stdout"] == "2"
    assert big["peak_gib"] - small["peak_gib"] > 0.25
    assert small["peak_gib"] < 0.2  # this process (the test runner) is far larger
    with pytest.raises(SystemExit, match="failed"):
        run_load_memory.run_peak([sys.executable, "-c", "raise SystemExit(3)"], "failing")


@pytest.mark.slow
def test_the_benchmark_runs_on_a_tiny_checkpoint(tmp_path):
    if not DEBERTA_TOKENIZER.is_dir():
        pytest.skip(f"the DeBERTa-v3-style tokenizer is not at {DEBERTA_TOKENIZER}")
    if not Path(run_load_memory.TIME).is_file():
        skip_optional("GNU time (/usr/bin/time) is not installed")
    import json

    out = tmp_path / "result.json"
    assert run_load_memory.main(["--shape", "tiny", "--pairs", "3", "--work", str(tmp_path / "work"),
                                 "--output", str(out)]) == 0
    result = json.loads(out.read_text())
    steps = result["peak_rss"]
    assert set(steps) == {"imports only", "import-model", "authors' inference", "spacy.load",
                          "spacy.load (stock format)", "annotate", "annotate --heap lean"}
    for step in steps.values():
        assert step["peak_gib"] > 0.1 and step["vs_weights"] == pytest.approx(
            step["peak_gib"] * 2 ** 30 / result["weights_bytes"], rel=0.01)
    assert steps["annotate"]["pairs_per_s"] > 0 and steps["annotate --heap lean"]["pairs_per_s"] > 0
    assert result["max_abs_prob_difference_vs_stock_format"] == 0.0
    assert str(tmp_path) not in out.read_text()  # no machine-specific paths
