"""benchmarks.run_speed: the generated pairs (speed_pairs) and a --quick run
end to end, then its tables (table_speed)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import speed_pairs

REPO = Path(__file__).resolve().parents[2]


def test_generated_pairs_are_seeded_and_realistic():
    a = speed_pairs.generate_pairs(50, seed=3)
    assert a == speed_pairs.generate_pairs(50, seed=3)
    assert a != speed_pairs.generate_pairs(50, seed=4)
    first = sum(len(p["first"]) for p in a) / len(a)
    second = sum(len(p["second"]) for p in a) / len(a)
    assert 70 <= first <= 110 and 25 <= second <= 45
    for p in a:
        assert len(p["targets_first"]) == len(p["first"])
        assert len(p["targets_second"]) == len(p["second"])
    fixed = speed_pairs.scale_pairs(128, 4, seed=0)
    assert all(len(p["first"]) + len(p["second"]) == 128 for p in fixed)


@pytest.mark.slow
def test_quick_benchmark_end_to_end(tmp_path):
    output = tmp_path / "speed.json"
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.run_speed", "--quick", "--no-data", "--output", str(output)],
        cwd=str(REPO),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-5000:]
    results = json.loads(output.read_text(encoding="utf-8"))
    table = subprocess.run([sys.executable, "-m", "benchmarks.table_speed", str(output)], cwd=str(REPO),
                           capture_output=True, text=True, timeout=120)
    assert table.returncode == 0, table.stderr[-5000:]
    md = output.with_suffix(".md").read_text(encoding="utf-8")
    assert md == table.stdout
    for section in ("## Inference", "## Training", "## Ratios", "## Scaling"):
        assert section in md
    assert results["command"].startswith("python -m benchmarks.run_speed --quick --no-data")
    assert results["data"]["source"].startswith("generated")

    assert set(results["inference"]) == {"backbone", "hf", "pipeline"}
    for system, r in results["inference"].items():
        assert r["n_pairs"] == 16, system
        for key in ("pairs_per_s", "words_per_s", "seconds", "peak_rss_mb", "rss_before_run_mb",
                    "rss_after_load_mb"):
            assert r[key] > 0, (system, key)
        assert r["peak_rss_mb"] >= r["rss_before_run_mb"] * 0.99
        assert r["threads_used"] == results["settings"]["torch_threads"]
    assert results["inference"]["pipeline"]["build_docs_seconds"] > 0

    assert set(results["training"]) == {"hf", "pipeline"}
    for system, r in results["training"].items():
        assert r["steps"] == 2 and r["n_examples"] == 16, system
        assert r["seconds_per_epoch"] > 0 and r["peak_rss_mb"] > 0, system
        assert len(r["losses"]) == 2

    for key in ("infer_throughput_c_over_a", "infer_throughput_c_over_b", "infer_peak_rss_c_over_b",
                "train_epoch_seconds_c_over_b"):
        assert results["ratios"][key] > 0, key

    points = {(r["system"], r["length"], r["batch_size"]) for r in results["scaling"]}
    assert points == {(s, n, b) for s in ("hf", "pipeline") for n in (32, 96) for b in (1, 4)}
    for r in results["scaling"]:
        assert r["pairs_per_s"] > 0 and r["peak_rss_mb"] > 0
