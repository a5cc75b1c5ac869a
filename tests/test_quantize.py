"""``python -m spacy_paraphrase quantize`` (spacy_paraphrase/quantized_pipeline.py): a
new pipeline directory that plain ``spacy.load`` runs int8, the fp32 weights
kept, config and meta rewritten, one vocabulary of method names, clear refusals."""
import filecmp

import numpy
import pytest
import spacy
import srsly
import torch
from spacy.util import load_config
from thinc.api import Config
from typer.testing import CliRunner

from spacy_paraphrase import token_probs
from spacy_paraphrase.cli import app
from spacy_paraphrase.encoder.quantize import PerTokenInt8Linear, is_quantized
from spacy_paraphrase.quantized_pipeline import quantize_config, quantize_overrides

runner = CliRunner()


@pytest.fixture(scope="module")
def fp32_dir(trained_pipeline, tmp_path_factory):
    nlp, _ = trained_pipeline
    nlp.meta["name"] = "tiny"
    nlp.meta["version"] = "1.2.3"
    path = tmp_path_factory.mktemp("pipelines") / "fp32"
    nlp.to_disk(path)
    return path


def _probs(nlp, examples):
    return [token_probs(doc, "paraphrase") for doc in nlp.pipe([eg.predicted.copy() for eg in examples])]


def test_command_writes_a_pipeline_that_loads_int8(fp32_dir, trained_pipeline, tmp_path):
    nlp, examples = trained_pipeline
    out = tmp_path / "int8"
    result = runner.invoke(app, ["quantize", str(fp32_dir), str(out), "--method", "int8"])
    assert result.exit_code == 0, result.output
    assert "13 Linear layers" in " ".join(result.output.split())  # 2 layers x 6 + the pooler of the tiny BERT
    config = load_config(out / "config.cfg", interpolate=False)
    model = config["components"]["transformer"]["model"]
    assert model["@architectures"] == "spacy_paraphrase.PairTransformerModel.v1"
    assert model["quantize"] == "int8"
    # the fp32 weights and everything but config and meta are copied unchanged
    assert filecmp.cmp(fp32_dir / "transformer" / "model", out / "transformer" / "model", shallow=False)
    changed = {name for name in ("config.cfg", "meta.json", "transformer/cfg", "paraphrase_spans/cfg", "tokenizer")
               if not filecmp.cmp(fp32_dir / name, out / name, shallow=False)}
    assert changed == {"config.cfg", "meta.json"}
    meta = srsly.read_json(out / "meta.json")
    assert meta["name"] == "tiny_int8"
    assert meta["spacy_paraphrase"]["quantize"] == {
        "method": "int8", "setting": "int8",
        "source_meta": {"lang": "en", "name": "tiny", "version": "1.2.3"},
    }

    int8 = spacy.load(out)  # plain spacy.load, no overrides
    assert is_quantized(int8.get_pipe("transformer").model.transformer)
    assert int8.meta["spacy_paraphrase"]["quantize"]["method"] == "int8"
    fp32_probs, int8_probs = _probs(nlp, examples), _probs(int8, examples)
    diff = max(float(numpy.nanmax(numpy.abs(a - b))) for a, b in zip(fp32_probs, int8_probs))
    assert 0.0 < diff < 0.02
    for doc in int8.pipe([eg.predicted.copy() for eg in examples]):
        assert "paraphrase" in doc.spans and set(doc.cats) == {"PARAPHRASE"}
    # its fp32 weights are the trained ones: quantize = "" gives the same outputs
    fp32 = spacy.load(out, config={"components.transformer.model.quantize": ""})
    for a, b in zip(fp32_probs, _probs(fp32, examples)):
        numpy.testing.assert_array_equal(a, b)
    # a quantized pipeline quantized again: nothing changes but the settings stay
    again = tmp_path / "again"
    result = runner.invoke(app, ["quantize", str(out), str(again), "--name", "other", "--method", "int8"])
    assert result.exit_code == 0, result.output
    assert srsly.read_json(again / "meta.json")["name"] == "other"


def test_default_per_token_method_writes_a_pipeline_that_loads_per_token(fp32_dir, trained_pipeline, tmp_path):
    nlp, examples = trained_pipeline
    out = tmp_path / "int8_token"
    result = runner.invoke(app, ["quantize", str(fp32_dir), str(out)])  # the default method
    assert result.exit_code == 0, result.output
    model = load_config(out / "config.cfg", interpolate=False)["components"]["transformer"]["model"]
    assert model["quantize"] == "int8-token" and model["@architectures"] == "spacy_paraphrase.PairTransformerModel.v1"
    meta = srsly.read_json(out / "meta.json")
    assert meta["name"] == "tiny_int8_token"  # a name spacy package accepts
    assert meta["spacy_paraphrase"]["quantize"]["setting"] == "int8-token"
    hf = spacy.load(out).get_pipe("transformer").model.transformer
    linears = [m for m in hf.modules() if isinstance(m, (torch.nn.Linear, PerTokenInt8Linear))]
    assert len(linears) == 13 and all(isinstance(m, PerTokenInt8Linear) for m in linears)
    diff = max(float(numpy.nanmax(numpy.abs(a - b)))
               for a, b in zip(_probs(nlp, examples), _probs(spacy.load(out), examples)))
    assert 0.0 < diff < 0.02


def test_command_refuses_clearly(fp32_dir, tmp_path):
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "file").write_text("x")
    cases = [
        ([str(fp32_dir), str(taken)], "not empty"),
        ([str(fp32_dir), str(fp32_dir)], "not empty"),
        ([str(tmp_path / "missing"), str(tmp_path / "o1")], "not a pipeline directory"),
        ([str(fp32_dir), str(tmp_path / "o2"), "--method", "static-int4"], "Unknown method"),
        ([str(fp32_dir), str(tmp_path / "o4"), "--method", ""], "Unknown method"),  # "" is no method
    ]
    baseline = tmp_path / "baseline"
    assert runner.invoke(app, ["baseline", "lexical", str(baseline)]).exit_code == 0
    cases.append(([str(baseline), str(tmp_path / "o3")], "nothing to quantize"))
    for args, message in cases:
        result = runner.invoke(app, ["quantize"] + args)
        assert result.exit_code == 1, args
        assert message in " ".join(result.output.split()), (args, result.output)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["baseline", "taken"]  # no leftovers


def test_config_rewrite_is_the_setting_on_v1():
    config = Config().from_str(
        """
[components]

[components.transformer]
factory = "transformer"

[components.transformer.model]
@architectures = "spacy_paraphrase.PairTransformerModel.v1"
name = "x"
max_length = 0
max_padding = 0.1

[components.classifier]
factory = "pair_classifier"

[components.classifier.model]
@architectures = "spacy_paraphrase.PairClassifier.v1"

[components.classifier.model.tok2vec]
@architectures = "spacy_paraphrase.PairTransformer.v1"
name = "y"

""",
        interpolate=False,
    )
    before = config.copy()
    paths = quantize_config(config, "int8")
    assert paths == ["components.transformer.model.quantize", "components.classifier.model.tok2vec.quantize"]
    trf = config["components"]["transformer"]["model"]
    inline = config["components"]["classifier"]["model"]["tok2vec"]
    assert trf["@architectures"] == "spacy_paraphrase.PairTransformerModel.v1"
    assert inline["@architectures"] == "spacy_paraphrase.PairTransformer.v1"
    for new, old in ((trf, before["components"]["transformer"]["model"]),
                     (inline, before["components"]["classifier"]["model"]["tok2vec"])):
        assert {k: v for k, v in new.items() if k not in ("@architectures", "quantize")} == \
            {k: v for k, v in old.items() if k not in ("@architectures", "quantize")}
        assert new["quantize"] == "int8"
    assert config["components"]["classifier"]["model"]["@architectures"] == "spacy_paraphrase.PairClassifier.v1"


def test_overrides_load_any_pipeline_int8_or_as_trained(fp32_dir):
    int8 = quantize_overrides(fp32_dir, "int8")
    assert int8 == {"components.transformer.model.quantize": "int8"}
    assert is_quantized(spacy.load(fp32_dir, config=int8).get_pipe("transformer").model.transformer)
    fp32 = spacy.load(fp32_dir, config=quantize_overrides(fp32_dir, ""))
    assert not is_quantized(fp32.get_pipe("transformer").model.transformer)


def test_smooth_method_calibrates_on_pairs_and_saves_it_with_the_weights(fp32_dir, trained_pipeline, tmp_path):
    from spacy.tokens import DocBin

    from spacy_paraphrase.encoder.quantize import SMOOTHING_ATTR

    nlp, examples = trained_pipeline
    pairs = tmp_path / "calibration.spacy"
    DocBin(docs=[eg.reference for eg in examples]).to_disk(pairs)
    out = tmp_path / "int8_smooth"
    result = runner.invoke(app, ["quantize", str(fp32_dir), str(out), "--method", "int8-smooth",
                                 "--calibrate", str(pairs), "--calibration-pairs", "2"])
    assert result.exit_code == 0, result.output
    assert "calibrated on 2 pairs of calibration.spacy" in " ".join(result.output.split())
    meta = srsly.read_json(out / "meta.json")
    assert meta["name"] == "tiny_int8_smooth"
    assert meta["spacy_paraphrase"]["quantize"]["calibration"] == {"data": "calibration.spacy", "pairs": 2, "alpha": 0.5}
    loaded = spacy.load(out)
    hf = loaded.get_pipe("transformer").model.transformer
    record = getattr(hf.config, SMOOTHING_ATTR)
    assert record["pairs"] == 2
    # query, key and value of each of the 2 layers share a group; every layer that ran was observed
    groups = [g["layers"] for g in record["groups"]]
    assert sum(len(g) == 3 for g in groups) == 2
    smoothed = [m for m in hf.modules() if isinstance(m, PerTokenInt8Linear) and m.input_smooth is not None]
    assert len(smoothed) == sum(len(g) for g in groups) >= 12
    int8_probs = _probs(loaded, examples)
    diff = max(float(numpy.nanmax(numpy.abs(a - b))) for a, b in zip(_probs(nlp, examples), int8_probs))
    assert 0.0 < diff < 0.02
    # the fp32 weights are as trained: quantize = "" ignores the calibration
    fp32 = spacy.load(out, config={"components.transformer.model.quantize": ""})
    for a, b in zip(_probs(nlp, examples), _probs(fp32, examples)):
        numpy.testing.assert_array_equal(a, b)
    # saved again (int8 weights) it loads with the same outputs
    loaded.to_disk(tmp_path / "saved_again")
    for a, b in zip(int8_probs, _probs(spacy.load(tmp_path / "saved_again"), examples)):
        numpy.testing.assert_array_equal(a, b)
    # a pipeline set to int8-smooth without a calibration says what to run when it loads
    with pytest.raises(ValueError, match="--calibrate"):
        spacy.load(fp32_dir, config=quantize_overrides(fp32_dir, "int8-smooth"))
    for args, message in (
        (["--method", "int8-smooth"], "needs --calibrate"),
        (["--method", "smooth-int8"], "smooth-int8"),  # an unreleased spelling: unknown
        (["--calibrate", str(pairs)], "uses no calibration"),
        (["--method", "int8-smooth", "--calibrate", str(pairs), "--alpha", "2"], "alpha must be in [0, 1]"),
        (["--method", "int8-smooth", "--calibrate", str(pairs), "--calibration-pairs", "0"], "must be >= 1"),
    ):
        bad = runner.invoke(app, ["quantize", str(fp32_dir), str(tmp_path / "refused")] + args)
        assert bad.exit_code == 1 and message in " ".join(bad.output.split()), (args, bad.output)
    assert not (tmp_path / "refused").exists()
