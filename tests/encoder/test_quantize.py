"""Int8 inference of the pair transformer (encoder/quantize.py, the quantize
setting of PairHFShim and of the v1 architectures): Linear layers quantized
when the weights are loaded or before the first prediction, outputs close to
fp32, the config override, fp32 by default, no aliases for unreleased names,
saving again, no training, no GPU."""
import pickle
import warnings

import numpy
import pytest
import spacy
import torch
from thinc.api import Adam, Linear, fix_random_seed

from spacy_paraphrase import token_probs
from spacy_paraphrase.encoder.quantize import QuantizationError
from spacy_paraphrase.encoder.shim import PairHFShim, set_quantize
from spacy_paraphrase.encoder import shim as shim_module
from spacy_paraphrase.encoder.quantize import (
    QUANTIZED_ATTR,
    PerTokenInt8Linear,
    check_quantize,
    is_quantized,
    quantize_module,
)

from tests.util import make_examples

QUANTIZE = "components.transformer.model.quantize"
ARCH = "components.transformer.model.@architectures"
PROB_TOLERANCE = 0.02  # int8 vs fp32, per token probability, on the tiny model
# setting -> the type its Linear layers become
LINEAR_TYPES = {"int8": torch.ao.nn.quantized.dynamic.Linear, "int8-token": PerTokenInt8Linear}


def _hf(nlp):
    return nlp.get_pipe("transformer").model.transformer


def _linear_types(module):
    """The types of the Linear layers (fp32 or quantized) of a torch module."""
    linear = (torch.nn.Linear, *LINEAR_TYPES.values())
    return {type(m) for m in module.modules() if isinstance(m, linear)}


def _probs(nlp, examples):
    docs = nlp.pipe([eg.predicted.copy() for eg in examples])
    return [token_probs(doc, "paraphrase") for doc in docs]


def _max_diff(a, b):
    return max(float(numpy.nanmax(numpy.abs(x - y))) for x, y in zip(a, b))


@pytest.fixture(scope="module")
def saved(trained_pipeline, tmp_path_factory):
    """The trained tiny pipeline (v1 config) on disk, with its probabilities."""
    nlp, examples = trained_pipeline
    path = tmp_path_factory.mktemp("fp32")
    nlp.to_disk(path)
    return path, examples, _probs(nlp, examples)


@pytest.mark.parametrize("setting", sorted(LINEAR_TYPES))
def test_override_quantizes_the_transformer_and_outputs_stay_close(saved, setting):
    path, examples, fp32 = saved
    nlp = spacy.load(path, config={QUANTIZE: setting})
    module = _hf(nlp)
    assert _linear_types(module) == {LINEAR_TYPES[setting]}  # no fp32 Linear left
    assert getattr(module.config, QUANTIZED_ATTR) == setting
    int8 = _probs(nlp, examples)
    diff = _max_diff(fp32, int8)
    assert 0.0 < diff < PROB_TOLERANCE  # quantized: not identical, but close
    docs = list(nlp.pipe([eg.predicted.copy() for eg in examples]))
    assert all("paraphrase" in doc.spans and "PARAPHRASE" in doc.cats for doc in docs)


def test_without_quantize_the_fp32_pipeline_loads(saved):
    path, examples, fp32 = saved
    for config in ({}, {QUANTIZE: ""}):
        nlp = spacy.load(path, config=config)
        assert not is_quantized(_hf(nlp))
        assert torch.nn.Linear in _linear_types(_hf(nlp))
        for x, y in zip(fp32, _probs(nlp, examples)):
            numpy.testing.assert_array_equal(x, y)
    for config in ({QUANTIZE: "int4"},):
        with pytest.raises(Exception, match="Unknown quantize setting"):
            spacy.load(path, config=config)


@pytest.mark.parametrize("old", ["dynamic-int8", "per-token-int8", "smooth-int8"])
def test_names_this_package_never_released_are_refused(saved, old):
    # 0.1.0 has never been released: no aliases for spellings used during development
    path, _, _ = saved
    with pytest.raises(ValueError, match="Unknown quantize setting"):
        check_quantize(old)
    with pytest.raises(Exception, match="Unknown quantize setting"):
        spacy.load(path, config={QUANTIZE: old})
    with pytest.raises(Exception, match="PairTransformerModel.v2"):
        spacy.load(path, config={ARCH: "spacy_paraphrase.PairTransformerModel.v2"})


@pytest.mark.parametrize("setting", sorted(LINEAR_TYPES))
def test_quantized_pipeline_saves_int8_weights_that_load_only_quantized(saved, tmp_path, setting):
    path, examples, _ = saved
    nlp = spacy.load(path, config={QUANTIZE: setting})
    int8 = _probs(nlp, examples)
    nlp.to_disk(tmp_path / "again")
    again = spacy.load(tmp_path / "again")  # its config says int8
    assert _linear_types(_hf(again)) == {LINEAR_TYPES[setting]}
    for x, y in zip(int8, _probs(again, examples)):
        numpy.testing.assert_array_equal(x, y)  # the same int8 weights, not re-quantized fp32
    other = ({""} | set(LINEAR_TYPES)) - {setting}
    for wrong in sorted(other):
        with pytest.raises(QuantizationError, match=f"saved int8-quantized with quantize = {setting!r}"):
            spacy.load(tmp_path / "again", config={QUANTIZE: wrong})
    # through bytes, copies and pickles as well
    copied = spacy.util.load_model_from_config(again.config)
    copied.from_bytes(again.to_bytes())
    for x, y in zip(int8, _probs(copied, examples)):
        numpy.testing.assert_array_equal(x, y)
    for x, y in zip(int8, _probs(pickle.loads(pickle.dumps(again)), examples)):
        numpy.testing.assert_array_equal(x, y)
    trf = again.get_pipe("transformer").model.copy()
    assert type(trf.layers[0].shims[0]) is PairHFShim and trf.layers[0].shims[0].quantize == setting
    assert is_quantized(trf.transformer)


def test_quantized_pipeline_cannot_be_trained(saved):
    path, examples, _ = saved
    nlp = spacy.load(path, config={QUANTIZE: "int8"})
    with pytest.raises(QuantizationError, match="inference only"):
        nlp.update(examples, sgd=Adam(1e-3))


def test_initialized_from_the_backbone_quantizes_before_predicting(tiny_bert):
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("transformer", config={"model": {"@architectures": "spacy_paraphrase.PairTransformerModel.v1", "name": tiny_bert, "quantize": "int8"}})
    nlp.add_pipe("paraphrase_spans", config={"model": {"tok2vec": {"@architectures": "spacy_paraphrase.PairTransformerListener.v1"}}})
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    with pytest.raises(QuantizationError, match="inference only"):  # spacy train with an int8 config
        nlp.update(examples, sgd=Adam(1e-3))
    docs = list(nlp.pipe([eg.predicted.copy() for eg in examples]))
    assert is_quantized(_hf(nlp)) and all("paraphrase" in doc.spans for doc in docs)


def test_inline_transformer_quantizes(tiny_bert, tmp_path):
    version = "v1"
    nlp = spacy.blank("en")
    nlp.add_pipe("pair_classifier", config={"model": {"tok2vec": {
        "@architectures": f"spacy_paraphrase.PairTransformer.{version}", "name": tiny_bert}}})
    examples = make_examples(nlp)
    for eg in examples:
        eg.reference.cats = {"YES": eg.reference.cats["PARAPHRASE"], "NO": 1.0 - eg.reference.cats["PARAPHRASE"]}
    nlp.initialize(lambda: examples)
    nlp.to_disk(tmp_path / "fp32")
    fp32 = [doc.cats for doc in nlp.pipe([eg.predicted.copy() for eg in examples])]
    key = "components.pair_classifier.model.tok2vec.quantize"
    int8_nlp = spacy.load(tmp_path / "fp32", config={key: "int8"})
    trf = int8_nlp.get_pipe("pair_classifier").model.get_ref("tok2vec").get_ref("transformer")
    assert is_quantized(trf.transformer)
    int8 = [doc.cats for doc in int8_nlp.pipe([eg.predicted.copy() for eg in examples])]
    for a, b in zip(fp32, int8):
        assert set(a) == set(b) == {"YES", "NO"}
        assert max(abs(a[k] - b[k]) for k in a) < PROB_TOLERANCE


def test_int8_is_refused_on_a_gpu(saved, monkeypatch):
    path, _, _ = saved
    monkeypatch.setattr(shim_module, "get_torch_default_device", lambda: torch.device("cuda", 0))
    with pytest.raises(QuantizationError, match="CPU only"):
        spacy.load(path, config={QUANTIZE: "int8"})
    module = torch.nn.Sequential(torch.nn.Linear(4, 4)).to("meta")  # a module off the CPU
    with pytest.raises(QuantizationError, match="CPU only"):
        quantize_module(module)


def test_per_token_linear_is_exact_where_the_values_are_on_the_int8_grid():
    # every weight row and input row holds 127 as its largest magnitude, so all
    # scales are 1 and the int8 product is the exact integer one
    weight = torch.tensor([[127.0, -3.0, 5.0], [-127.0, 0.0, 64.0]])
    bias = torch.tensor([0.5, -2.0])
    linear = torch.nn.Linear(3, 2)
    with torch.no_grad():
        linear.weight.copy_(weight)
        linear.bias.copy_(bias)
    x = torch.tensor([[[1.0, 127.0, -2.0], [-127.0, 7.0, 100.0]]])  # [batch 1, 2 tokens, 3]
    layer = PerTokenInt8Linear(linear)
    assert layer.weight_int8.dtype == torch.int8 and layer.weight_int8.shape == (3, 2)
    out = layer(x)
    assert out.shape == (1, 2, 2)
    # by hand: [127 - 3*127 - 2*5 + 0.5, -127 + 0 - 128 - 2] and [-16129 - 21 + 500 + 0.5, 16129 + 6400 - 2]
    torch.testing.assert_close(out[0], torch.tensor([[-263.5, -257.0], [-15649.5, 22527.0]]), rtol=0, atol=1e-3)
    no_bias = torch.nn.Linear(3, 2, bias=False)
    with torch.no_grad():
        no_bias.weight.copy_(weight)
    torch.testing.assert_close(PerTokenInt8Linear(no_bias)(x), out - bias, rtol=0, atol=1e-3)


def test_per_token_linear_keeps_ordinary_tokens_precise_beside_an_outlier_token():
    torch.manual_seed(0)
    linear = torch.nn.Linear(64, 32)
    x = torch.randn(16, 64)
    x[3] *= 400.0  # one token with huge activations, as in mpnet's feed-forward layers
    with torch.no_grad():
        exact = linear(x)
        per_token = PerTokenInt8Linear(linear)(x)
        per_batch = torch.nn.Sequential(linear)
        torch.ao.quantization.quantize_dynamic(per_batch, {torch.nn.Linear}, dtype=torch.qint8, inplace=True)
        per_batch = per_batch(x)
    others = [i for i in range(16) if i != 3]

    def rel_err(out):
        return float((out[others] - exact[others]).abs().mean() / exact[others].abs().mean())

    assert rel_err(per_token) < 0.02  # each token has its own scale
    assert rel_err(per_batch) > 0.2  # one scale for the batch: the outlier swamps the rest
    assert float((per_token[3] - exact[3]).abs().mean() / exact[3].abs().mean()) < 0.02


def test_per_token_layers_fed_one_tensor_quantize_it_once_and_agree(monkeypatch):
    from spacy_paraphrase.encoder import quantize as quantize_module_

    torch.manual_seed(1)
    layers = [PerTokenInt8Linear(torch.nn.Linear(16, 8)) for _ in range(3)]  # query, key, value
    x = torch.randn(2, 5, 16)
    calls = []
    real = quantize_module_.quantize_per_token
    monkeypatch.setattr(quantize_module_, "quantize_per_token", lambda t, *rest: calls.append(t) or real(t, *rest))
    shared = [layer(x) for layer in layers]
    assert len(calls) == 1  # one quantization for the three layers
    for layer, out in zip(layers, shared):  # the same as each layer quantizing on its own
        quantize_module_._LAST_QUANTIZED.ref = None
        torch.testing.assert_close(layer(x), out, rtol=0, atol=0)
    calls.clear()
    y = x.clone()
    layers[0](y)
    y.mul_(3.0)  # changed in place: quantized afresh
    torch.testing.assert_close(layers[1](y), layers[1](x * 3.0), rtol=0, atol=0)
    assert len(calls) == 3
    calls.clear()
    with torch.inference_mode():  # no version counter: never cached, still right
        z = torch.randn(3, 16)
        outs = [layer(z) for layer in layers]
    assert len(calls) == 3
    for layer, out in zip(layers, outs):
        torch.testing.assert_close(out, layer(z.clone()), rtol=0, atol=0)


def test_settings_are_checked():
    assert check_quantize("") == "" and check_quantize("int8") == "int8"
    assert check_quantize("int8-token") == "int8-token"
    with pytest.raises(ValueError, match="Unknown quantize setting"):
        check_quantize("fp16")
    with pytest.raises(ValueError, match="No pair transformer"):
        set_quantize(Linear(2, 2), "int8")


def test_quantize_per_token_rows_and_the_input_left_alone():
    """One symmetric scale per row (its largest magnitude -> 127), the smoothing
    divisor applied first; the caller's tensor is never written to."""
    from spacy_paraphrase.encoder.quantize import quantize_per_token

    x = torch.tensor([[[1.0, -2.0, 0.5], [0.0, 0.0, 0.0]], [[-4.0, 1.0, 3.0], [0.25, 0.5, -1.0]]])
    inverse_smooth = torch.tensor([1.0, 0.5, 2.0])
    for smooth in (None, inverse_smooth):
        before = x.clone()
        int8, scale = quantize_per_token(x, smooth)
        assert torch.equal(x, before)
        rows = x.reshape(-1, 3) * (1.0 if smooth is None else smooth)
        expected_scale = rows.abs().amax(dim=1, keepdim=True).clamp(min=1e-8) / 127.0
        assert int8.dtype == torch.int8 and int8.shape == (4, 3)
        assert torch.allclose(scale, expected_scale)
        assert torch.equal(int8, torch.round(rows / expected_scale).to(torch.int8))
        assert int8.abs().amax(dim=1).tolist() == [127, 0, 127, 127]
