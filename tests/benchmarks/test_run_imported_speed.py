"""benchmarks.run_imported_speed: one small run writes every system's
throughput, the two ratios and the int8 agreement, with no machine paths
(the speed itself is never asserted)."""
import json

import pytest

from benchmarks import run_imported_speed as bench


def test_a_small_run_writes_every_figure_and_no_machine_path(tmp_path):
    if not bench.DEBERTA_TOKENIZER.is_dir():
        pytest.skip(f"the DeBERTa-v3-style tokenizer is not at {bench.DEBERTA_TOKENIZER}")
    out = tmp_path / "imported.json"
    assert bench.main(["--shape", "tiny", "--data", str(tmp_path / "missing.tsv"), "--pairs", "12", "--batch", "4",
                       "--rounds", "1", "--threads", "1", "--quantize", "--output", str(out)]) == 0
    result = json.loads(out.read_text(encoding="utf8"))
    assert set(result["pairs_per_s"]) == {"authors", "bare", "pipeline", "int8", "int8-token"}
    assert isinstance(result["machine"]["cpu_flags"], list)  # the int8 figure depends on them (VNNI, AMX)
    per_s = result["pairs_per_s"]
    assert result["pipeline_over_authors"] == pytest.approx(per_s["pipeline"] / per_s["authors"])
    assert result["pipeline_over_bare"] == pytest.approx(per_s["pipeline"] / per_s["bare"])
    for method in ("int8", "int8-token"):
        q = result["quantized"][method]
        assert q["over_fp32"] == pytest.approx(per_s[method] / per_s["pipeline"])
        assert 0.0 <= q["identical_pair_decisions"] <= 1.0 and 0.0 <= q["identical_word_highlights"] <= 1.0
    text = out.read_text(encoding="utf8")
    assert str(tmp_path) not in text and "/tmp" not in text


def test_quantize_times_only_the_methods_named(tmp_path):
    if not bench.DEBERTA_TOKENIZER.is_dir():
        pytest.skip(f"the DeBERTa-v3-style tokenizer is not at {bench.DEBERTA_TOKENIZER}")
    out = tmp_path / "imported.json"
    assert bench.main(["--shape", "tiny", "--data", str(tmp_path / "missing.tsv"), "--pairs", "4", "--batch", "4",
                       "--rounds", "1", "--threads", "1", "--quantize", "int8", "--output", str(out)]) == 0
    result = json.loads(out.read_text(encoding="utf8"))
    assert set(result["pairs_per_s"]) == {"authors", "bare", "pipeline", "int8"}
    assert set(result["quantized"]) == {"int8"}
