"""benchmarks.table_speed: the markdown of a run_speed JSON."""
import json
import subprocess
import sys
from pathlib import Path

from benchmarks import table_speed

REPO = Path(__file__).resolve().parents[2]
STORED = REPO / "benchmarks" / "results" / "speed.json"


def test_stored_tables_reproduce_from_the_stored_json():
    results = json.loads(STORED.read_text(encoding="utf-8"))
    assert table_speed.render_markdown(results) == STORED.with_suffix(".md").read_text(encoding="utf-8")


def test_parts_that_did_not_run_have_no_table():
    results = json.loads(STORED.read_text(encoding="utf-8"))
    results.update(training={}, scaling=[], notes=[])
    results["ratios"] = {k: v for k, v in results["ratios"].items() if k.startswith("infer_")}
    del results["inference"]["backbone"]
    md = table_speed.render_markdown(results)
    assert "## Inference" in md and "(b) plain HF token classification" in md
    assert "(a) bare backbone forward" not in md
    assert "## Training" not in md and "## Scaling" not in md and "## Notes" not in md
    assert "| training seconds per epoch c/b |" not in md


def test_cli_writes_the_markdown_beside_the_json(tmp_path):
    results = tmp_path / "speed.json"
    results.write_text(STORED.read_text(encoding="utf-8"), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "benchmarks.table_speed", str(results)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "speed.md").read_text(encoding="utf-8") == proc.stdout
    assert proc.stdout == STORED.with_suffix(".md").read_text(encoding="utf-8")
