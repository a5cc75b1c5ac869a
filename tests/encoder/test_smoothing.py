"""SmoothQuant calibration and the "int8-smooth" layers (encoder/quantize.py,
the section "Activation smoothing")."""
import pytest
import torch

from spacy_paraphrase.encoder import quantize as quantize_mod
from spacy_paraphrase.encoder.quantize import PerTokenInt8Linear, QuantizationError, quantize_module
from spacy_paraphrase.encoder.quantize import SMOOTHING_ATTR, calibrating, factors


class Block(torch.nn.Module):
    """q, k, v fed one tensor; o fed another (like an attention block)."""

    def __init__(self, width=8):
        super().__init__()
        self.q, self.k, self.v = (torch.nn.Linear(width, width) for _ in range(3))
        self.o = torch.nn.Linear(width, width)
        self.config = type("Config", (), {})()

    def forward(self, x):
        return self.o(self.q(x) + self.k(x) * self.v(x))


def test_calibration_groups_layers_fed_one_tensor_and_records_channel_maxima():
    torch.manual_seed(0)
    block = Block()
    xs = [torch.randn(2, 3, 8), torch.randn(4, 8) * 3]
    with torch.no_grad():
        hidden = [block.q(x) + block.k(x) * block.v(x) for x in xs]  # what o sees
    with calibrating(block) as calibration:
        for x in xs:
            block(x)
    assert calibration.groups() == [["q", "k", "v"], ["o"]]
    expected_qkv = torch.maximum(xs[0].reshape(-1, 8).abs().amax(0), xs[1].abs().amax(0))
    expected_o = torch.maximum(hidden[0].reshape(-1, 8).abs().amax(0), hidden[1].abs().amax(0))
    torch.testing.assert_close(calibration.absmax["q"], expected_qkv)
    torch.testing.assert_close(calibration.absmax["o"], expected_o)
    record = calibration.record(alpha=0.5, pairs=2)
    assert record["alpha"] == 0.5 and record["pairs"] == 2
    assert [g["layers"] for g in record["groups"]] == [["q", "k", "v"], ["o"]]
    assert record["groups"][0]["absmax"] == pytest.approx(expected_qkv.tolist(), rel=1e-5)
    # the hooks are gone after the block
    block(xs[0])
    assert calibration.passes == 2
    with pytest.raises(ValueError, match="alpha"):
        calibration.record(alpha=1.5)


def test_a_layer_fed_different_tensors_across_passes_stays_alone():
    class Switch(Block):
        def forward(self, x, same=True):
            y = x if same else x.clone()
            return self.q(x) + self.k(y)

    block = Switch()
    with calibrating(block) as calibration:
        block(torch.randn(3, 8))
        block(torch.randn(3, 8), same=False)
    assert calibration.groups() == [["q"], ["k"]]


def test_factors_by_hand():
    layer = torch.nn.Linear(2, 3)
    with torch.no_grad():
        layer.weight.copy_(torch.tensor([[1.0, -4.0], [0.5, 2.0], [-0.25, 1.0]]))  # column maxima 1, 4
    module = torch.nn.Sequential(layer)
    record = {"alpha": 0.5, "groups": [{"layers": ["0"], "absmax": [4.0, 1.0]}]}
    s = factors(module, record)["0"]
    torch.testing.assert_close(s, torch.tensor([2.0, 0.5]))  # sqrt(4)/sqrt(1), sqrt(1)/sqrt(4)
    s = factors(module, dict(record, alpha=0.75))["0"]
    torch.testing.assert_close(s, torch.tensor([4 ** 0.75, 4 ** -0.25]))
    # a group takes its weights' column maxima together: here 1 and 16 (the second layer's)
    second = torch.nn.Linear(2, 1)
    with torch.no_grad():
        second.weight.copy_(torch.tensor([[0.5, 16.0]]))
    pair = torch.nn.Sequential(layer, second)
    shared = factors(pair, {"alpha": 0.5, "groups": [{"layers": ["0", "1"], "absmax": [4.0, 1.0]}]})
    torch.testing.assert_close(shared["0"], torch.tensor([2.0, 0.25]))
    assert shared["0"] is shared["1"]
    for bad in ({"groups": [{"layers": ["1"], "absmax": [1.0, 1.0]}]},
                {"groups": [{"layers": ["0"], "absmax": [1.0, 1.0, 1.0]}]}):
        with pytest.raises(ValueError, match="does not fit this model"):
            factors(module, bad)
    with pytest.raises(ValueError, match="does not fit this model"):
        factors(module, {"groups": [{"layers": ["2"], "absmax": [1.0, 1.0]}]})


def _outlier_input(n=64, width=32, channel=5, scale=60.0):
    torch.manual_seed(3)
    x = torch.randn(n, width)
    x[:, channel] *= scale  # large in every token, as the outlier dimensions of a transformer
    return x


def test_smoothing_cuts_the_error_of_an_outlier_channel():
    x = _outlier_input()
    linear = torch.nn.Linear(32, 16)
    exact = linear(x).detach()
    plain = PerTokenInt8Linear(linear)(x)
    s = factors(torch.nn.Sequential(linear), {"alpha": 0.5, "groups": [
        {"layers": ["0"], "absmax": x.abs().amax(0).tolist()}]})["0"]
    smoothed_layer = PerTokenInt8Linear(linear, s)
    torch.testing.assert_close(smoothed_layer.input_smooth, 1 / s)
    smoothed = smoothed_layer(x)
    plain_err = (plain - exact).abs().mean()
    smooth_err = (smoothed - exact).abs().mean()
    assert smooth_err < plain_err / 3
    # the layer divides its input by s: fed x * s it no longer matches x's product
    assert (smoothed_layer(x * s) - exact).abs().mean() > 10 * smooth_err


def test_quantize_module_int8_smooth_from_the_saved_calibration(monkeypatch):
    torch.manual_seed(0)
    block = Block(width=32)
    x = _outlier_input()
    exact = block(x).detach()
    with pytest.raises(QuantizationError, match="--calibrate"):
        quantize_module(Block(width=32), "int8-smooth")
    with calibrating(block) as calibration:
        block(x)
    setattr(block.config, SMOOTHING_ATTR, calibration.record())
    plain = Block(width=32)
    plain.load_state_dict(block.state_dict())
    quantize_module(plain, "int8-token")
    assert quantize_module(block, "int8-smooth") == 4
    assert all(isinstance(m, PerTokenInt8Linear) for m in (block.q, block.k, block.v, block.o))
    # the group shares one buffer, and its input is quantized once for q, k, v
    assert block.q.input_smooth is block.k.input_smooth is block.v.input_smooth
    assert block.o.input_smooth is not block.q.input_smooth
    calls = []
    real = quantize_mod.quantize_per_token
    monkeypatch.setattr(quantize_mod, "quantize_per_token", lambda t, *rest: calls.append(t) or real(t, *rest))
    smoothed = block(x)
    assert len(calls) == 2  # q/k/v once, o once
    assert (smoothed - exact).abs().mean() < (plain(x) - exact).abs().mean()
    # the state dict saves the smoothing and loads back into a module quantized alike
    again = Block(width=32)
    setattr(again.config, SMOOTHING_ATTR, getattr(block.config, SMOOTHING_ATTR))
    quantize_module(again, "int8-smooth")
    again.load_state_dict(block.state_dict())
    torch.testing.assert_close(again(x), smoothed, rtol=0, atol=0)
    assert again.q.input_smooth is again.v.input_smooth  # load_state_dict copies in place
    # a calibration of another model is refused clearly
    other = Block(width=16)
    setattr(other.config, SMOOTHING_ATTR, getattr(block.config, SMOOTHING_ATTR))
    with pytest.raises(QuantizationError, match="does not fit"):
        quantize_module(other, "int8-smooth")
    # a module quantized one way is not silently kept when asked for another
    assert quantize_module(plain, "int8-token") == 4
    with pytest.raises(QuantizationError, match="int8-token"):
        quantize_module(plain, "int8-smooth")


def test_a_channel_silent_in_calibration_is_not_blown_up():
    layer = torch.nn.Linear(4, 2)
    record = {"alpha": 0.5, "groups": [{"layers": ["0"], "absmax": [4.0, 4.0, 4.0, 0.0]}]}
    s = factors(torch.nn.Sequential(layer), record)["0"]
    weight = layer.weight.detach().abs().amax(0)
    # the silent channel is treated as 1% of the mean maximum (3.0), not as 1e-5
    torch.testing.assert_close(s[3], (0.03 ** 0.5) / weight[3].clamp(min=1e-5) ** 0.5)
