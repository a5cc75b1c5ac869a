"""studies.run_quantize and table_quantize on the tests' tiny pipeline: one
run loads it fp32 and int8, times both, scores both with the project's
evaluator, and writes ratios and deltas without machine paths."""
import importlib.util
import json
import re

import pytest
from spacy.tokens import DocBin
from typer.testing import CliRunner

from studies import run_quantize, table_quantize
from spacy_paraphrase.cli import app

ABSOLUTE_PATH = re.compile(r'(^|[\s"`(])/[A-Za-z]')
KEYS = ("paraphrase_spans_pair_acc", "paraphrase_spans_pair_macro_f",
        "paraphrase_spans_jaccard_first", "paraphrase_spans_jaccard_second")


@pytest.fixture(scope="module")
def model_and_data(trained_pipeline, tmp_path_factory):
    nlp, examples = trained_pipeline
    path = tmp_path_factory.mktemp("bench")
    nlp.to_disk(path / "model")
    DocBin(docs=[eg.reference for eg in examples] * 3).to_disk(path / "dev.spacy")
    return path


def test_one_run_compares_fp32_and_int8(model_and_data, tmp_path):
    output = tmp_path / "results" / "quantize.json"
    args = [str(model_and_data / "model"), str(model_and_data / "dev.spacy"), "--output", str(output),
            "--repeats", "2", "--batch-size", "4", "--threads", "1", "--setting", "int8"]
    assert run_quantize.main(args) == 0
    text = output.read_text()
    r = json.loads(text)
    assert r["data"]["n_pairs"] == 12 and r["settings"]["batch_size"] == 4
    for system in ("fp32", "int8"):
        assert len(r["speed"][system]["seconds"]) == 2 and r["speed"][system]["pairs_per_s"] > 0
        assert set(r["scores"][system]) == set(KEYS)
    ratios = r["ratios"]
    assert ratios["speedup"] == pytest.approx(r["speed"]["int8"]["pairs_per_s"] / r["speed"]["fp32"]["pairs_per_s"])
    assert ratios["speedup_cpu"] > 0 and ratios["speedup_median_of_rounds"] > 0
    for key in KEYS:
        assert r["deltas_points"][key] == pytest.approx(100 * (r["scores"]["int8"][key] - r["scores"]["fp32"][key]))
    assert ratios["delta_accuracy_points"] == r["deltas_points"]["paraphrase_spans_pair_acc"]
    assert ratios["delta_jaccard_first_points"] == r["deltas_points"]["paraphrase_spans_jaccard_first"]
    assert ratios["delta_jaccard_second_points"] == r["deltas_points"]["paraphrase_spans_jaccard_second"]
    # the int8 side really is quantized: smaller state, outputs close but not identical
    assert ratios["transformer_state_int8_over_fp32"] < 1.0
    assert 0.0 < r["outputs"]["token_prob_abs_diff"]["max"] < 0.02
    assert r["outputs"]["cats_abs_diff"]["max"] < 0.02
    # the bare encoder: torch fp32 and int8 always, ONNX Runtime where it is installed
    encoder = r["encoder"]["systems"]
    assert encoder["torch_fp32"]["hidden_abs_diff_vs_torch_fp32"]["max"] == 0.0
    assert 0.0 < encoder["torch_int8"]["hidden_abs_diff_vs_torch_fp32"]["max"] < 0.05
    assert r["encoder"]["speedups"]["torch_int8_over_torch_fp32"] == pytest.approx(
        encoder["torch_int8"]["pairs_per_s"] / encoder["torch_fp32"]["pairs_per_s"])
    if importlib.util.find_spec("onnxruntime") and importlib.util.find_spec("onnx"):
        assert encoder["ort_fp32"]["hidden_abs_diff_vs_torch_fp32"]["max"] < 1e-4
        assert 0.0 < encoder["ort_int8"]["hidden_abs_diff_vs_torch_fp32"]["max"] < 0.2
        assert r["encoder"]["onnx_file_mb"]["encoder_int8"] < r["encoder"]["onnx_file_mb"]["encoder"]
    else:
        assert "pip install onnxruntime onnx" in encoder["ort_int8"]["skipped"]
    # no machine paths: every path relative to the repository
    assert not ABSOLUTE_PATH.search(text), ABSOLUTE_PATH.search(text)

    md_path = tmp_path / "quantize.md"
    table_quantize.main([str(output), "--output", str(md_path)])
    md = md_path.read_text()
    assert f"**{ratios['speedup']:.2f}×**" in md
    assert "| paraphrase_spans_jaccard_first |" in md and "| int8 |" in md
    assert "| torch dynamic int8 |" in md
    assert not ABSOLUTE_PATH.search(md)


def test_default_per_token_setting_is_measured_and_named(model_and_data, tmp_path):
    output = tmp_path / "token.json"
    args = [str(model_and_data / "model"), str(model_and_data / "dev.spacy"), "--output", str(output),
            "--repeats", "1", "--batch-size", "4", "--threads", "1"]  # the default setting
    assert run_quantize.main(args) == 0
    r = json.loads(output.read_text())
    assert r["settings"]["quantize_setting"] == "int8-token"
    assert r["settings"]["int8_model"] == 'MODEL with quantize = "int8-token"'
    assert r["speed"]["int8"]["pairs_per_s"] > 0
    assert 0.0 < r["encoder"]["systems"]["torch_int8"]["hidden_abs_diff_vs_torch_fp32"]["max"] < 0.2
    md_path = tmp_path / "token.md"
    table_quantize.main([str(output), "--output", str(md_path)])
    assert "| torch int8-token |" in md_path.read_text()


def test_int8_side_from_the_quantize_command(model_and_data, tmp_path):
    int8_dir = tmp_path / "int8"
    result = CliRunner().invoke(app, ["quantize", str(model_and_data / "model"), str(int8_dir)])
    assert result.exit_code == 0, result.output
    output = tmp_path / "q.json"
    assert run_quantize.main([str(model_and_data / "model"), str(model_and_data / "dev.spacy"), "--int8-model",
                              str(int8_dir), "--output", str(output), "--repeats", "1", "--limit", "4", "--no-encoder"]) == 0
    r = json.loads(output.read_text())
    assert r["data"]["n_pairs"] == 4 and r["settings"]["int8_model"].endswith("int8")
    assert r["settings"]["quantize_setting"] == "int8-token"  # read from the loaded module
    assert r["encoder"] is None
    assert 0.0 < r["outputs"]["token_prob_abs_diff"]["max"] < 0.02
    # a pipeline without a pair transformer is refused
    (tmp_path / "config.cfg").write_text("[components]\n")
    with pytest.raises(SystemExit, match="No spacy_paraphrase pair transformer"):
        run_quantize.overrides(tmp_path, "int8")


def test_scores_compared_per_component():
    keys = [("pc_acc", "pair_classifier", "acc"), ("pc_macro_f", "pair_classifier", "macro_f"),
            ("pc_pos_f", "pair_classifier", "pos_f")]
    scores = {"fp32": {"pc_acc": 0.75, "pc_macro_f": 0.5, "pc_pos_f": 0.6, "speed": 10.0},
              "int8": {"pc_acc": 0.70, "pc_macro_f": 0.5, "pc_pos_f": 0.65, "speed": 20.0}}
    out = run_quantize.compare_scores(scores, keys)
    assert out["scores"]["fp32"] == {"pc_acc": 0.75, "pc_macro_f": 0.5, "pc_pos_f": 0.6}
    assert out["deltas_points"] == pytest.approx({"pc_acc": -5.0, "pc_macro_f": 0.0, "pc_pos_f": 5.0})
    assert out["summary"] == pytest.approx({"delta_accuracy_points": -5.0, "delta_pos_f_points": 5.0})
