"""The transformer's weights on disk (encoder/weights_file.py, encoder/component.py):
the safetensors reader against the safetensors library, the module built
without weights and filled from the file, and pipelines saved by the
``pair_transformer`` component (weights apart) or the old way (in the model file)."""
import shutil
import struct

import numpy
import pytest
import spacy
import torch
from safetensors.torch import load_file, save_file

from spacy_paraphrase import make_pair_doc, token_probs
from spacy_paraphrase.encoder.weights_file import (
    WEIGHTS_FILE, WeightsFileError, empty_module, load_weights, read_index, read_tensor, save_weights)
from tests.util import make_examples, make_nlp

PAIRS = [("We won the game on Sunday.", "You won it?"), ("Is it far from the station?", "About three km.")]


def test_the_reader_reads_what_the_library_writes_and_the_library_ours(tmp_path):
    tensors = {"f32": torch.randn(3, 5), "f16": torch.randn(7).half(), "bf16": torch.randn(2, 2).bfloat16(),
               "i64": torch.arange(6).reshape(2, 3), "empty": torch.zeros(0, 4), "scalar": torch.tensor(2.5)}
    save_file(tensors, str(tmp_path / "lib.safetensors"))
    index = read_index([tmp_path / "lib.safetensors"])
    assert set(index) == set(tensors)
    for name, tensor in tensors.items():
        got = read_tensor(index[name])
        assert got.dtype == tensor.dtype and got.shape == tensor.shape and torch.equal(got, tensor), name
    module = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.LayerNorm(3))
    save_weights(module, tmp_path / "ours.safetensors")
    loaded = load_file(str(tmp_path / "ours.safetensors"))
    assert set(loaded) == set(module.state_dict())
    assert all(torch.equal(loaded[k], v) for k, v in module.state_dict().items())


def test_a_damaged_file_is_one_clear_error(tmp_path):
    save_file({"w": torch.randn(64, 64)}, str(tmp_path / "ok.safetensors"))
    data = (tmp_path / "ok.safetensors").read_bytes()
    (tmp_path / "cut.safetensors").write_bytes(data[:-100])
    (tmp_path / "junk.safetensors").write_bytes(b"not a safetensors file at all")
    (tmp_path / "huge_header.safetensors").write_bytes(struct.pack("<Q", 10 ** 12) + b"{}")
    for name, message in [("cut", "cut or inconsistent"), ("junk", "not a safetensors file"),
                          ("huge_header", "not a safetensors file")]:
        with pytest.raises(WeightsFileError, match=message):
            read_index([tmp_path / f"{name}.safetensors"])


def test_an_empty_module_filled_from_the_file_equals_the_module(tiny_bert, tmp_path):
    """Built on the meta device (no random init), every parameter read from the
    file; the non-persistent buffers (position ids) are there; tied parameters
    stay tied; a missing, reshaped or unused tensor is refused."""
    from pathlib import Path
    from transformers import AutoConfig, AutoModel

    tiny_bert = Path(tiny_bert)
    source = AutoModel.from_pretrained(tiny_bert)
    index = read_index([tiny_bert / "model.safetensors"]) if (tiny_bert / "model.safetensors").is_file() else None
    if index is None:
        pytest.skip("the tiny backbone has no model.safetensors")
    with empty_module():
        module = AutoModel.from_config(AutoConfig.from_pretrained(tiny_bert))
    assert all(p.device.type == "meta" for p in module.parameters())
    load_weights(module, index, key=lambda name: name if name in index else f"bert.{name}")
    assert not any(p.device.type == "meta" for p in module.parameters())
    assert set(module.state_dict()) == set(source.state_dict())
    assert all(torch.equal(module.state_dict()[k], v) for k, v in source.state_dict().items())
    assert torch.equal(module.embeddings.position_ids, source.embeddings.position_ids)
    tied = torch.nn.Sequential(torch.nn.Embedding(5, 3), torch.nn.Linear(3, 5, bias=False))
    tied[1].weight = tied[0].weight
    save_weights(tied, tmp_file := tmp_path / "tied.safetensors")
    assert len(read_index([tmp_file])) == 1  # stored once
    with empty_module():
        again = torch.nn.Sequential(torch.nn.Embedding(5, 3), torch.nn.Linear(3, 5, bias=False))
    again[1].weight = again[0].weight
    load_weights(again, read_index([tmp_file]))
    assert again[1].weight is again[0].weight and torch.equal(again[0].weight, tied[0].weight)
    with empty_module():
        other = torch.nn.Linear(3, 4)
    with pytest.raises(WeightsFileError, match="no tensor"):
        load_weights(other, read_index([tmp_file]))
    save_file({"weight": torch.zeros(5, 3), "bias": torch.zeros(4)}, str(tmp_path / "shape.safetensors"))
    with pytest.raises(WeightsFileError, match="is \\(5, 3\\)"):
        load_weights(other, read_index([tmp_path / "shape.safetensors"]))
    save_file({"weight": torch.zeros(4, 3), "bias": torch.zeros(4), "extra": torch.zeros(1)},
              str(tmp_path / "extra.safetensors"))
    with pytest.raises(WeightsFileError, match="does not use"):
        load_weights(other, read_index([tmp_path / "extra.safetensors"]))


def _probs(nlp):
    return [numpy.nan_to_num(token_probs(doc)) for doc in nlp.pipe(make_pair_doc(nlp, a, b) for a, b in PAIRS)]


@pytest.fixture(scope="module")
def trained(tiny_bert, tmp_path_factory):
    """A tiny pair_transformer pipeline after two updates (weights off the backbone's), saved."""
    from thinc.api import Adam, fix_random_seed

    fix_random_seed(0)
    nlp = make_nlp(tiny_bert)
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    optimizer = Adam(0.01)
    for _ in range(2):
        nlp.update(examples, sgd=optimizer)
    out = tmp_path_factory.mktemp("weights_apart") / "pipeline"
    nlp.to_disk(out)
    return nlp, out


def test_the_weights_are_saved_apart_and_load_the_same(trained):
    nlp, out = trained
    folder = out / "transformer"
    assert sorted(p.name for p in folder.iterdir()) == ["cfg", "model", WEIGHTS_FILE]
    weights = (folder / WEIGHTS_FILE).stat().st_size
    module = nlp.get_pipe("transformer").model.layers[0].shims[0]._model
    assert weights >= sum(t.numel() * t.element_size() for t in module.state_dict().values())
    assert (folder / "model").stat().st_size < weights  # config, tokenizer, settings: no weights
    loaded = spacy.load(out)
    again = loaded.get_pipe("transformer").model.layers[0].shims[0]._model
    assert all(torch.equal(again.state_dict()[k], v) for k, v in module.state_dict().items())
    assert all(numpy.array_equal(a, b) for a, b in zip(_probs(nlp), _probs(loaded)))


def test_pipelines_saved_the_old_way_still_load(trained, tmp_path):
    """A pipeline saved before (the stock ``transformer`` factory, weights in
    the model file), and a pair_transformer folder without the weights file,
    load and give the same probabilities."""
    nlp, out = trained
    expected = _probs(nlp)
    stock = tmp_path / "stock"
    shutil.copytree(out, stock)
    (stock / "transformer" / WEIGHTS_FILE).unlink()
    (stock / "transformer" / "model").write_bytes(nlp.get_pipe("transformer").model.to_bytes())
    old_folder = tmp_path / "old_folder"
    shutil.copytree(stock, old_folder)
    config = (stock / "config.cfg").read_text()
    assert 'factory = "pair_transformer"' in config
    (stock / "config.cfg").write_text(config.replace('factory = "pair_transformer"', 'factory = "transformer"'))
    for folder in (stock, old_folder):
        loaded = spacy.load(folder)
        assert all(numpy.array_equal(a, b) for a, b in zip(expected, _probs(loaded))), folder.name
    assert type(spacy.load(stock).get_pipe("transformer")).__name__ == "Transformer"
    # saved again by the new component: weights apart
    spacy.load(old_folder).to_disk(tmp_path / "resaved")
    assert (tmp_path / "resaved" / "transformer" / WEIGHTS_FILE).is_file()


def test_a_quantized_pipeline_keeps_its_int8_weights_in_the_model_file(trained, tmp_path):
    """int8 weights are no plain tensors for safetensors: they stay in the model
    file, and no stale weights file is left beside it."""
    nlp, out = trained
    int8 = spacy.load(out, config={"components.transformer.model.quantize": "int8"})
    expected = _probs(int8)
    target = tmp_path / "int8"
    shutil.copytree(out, target)  # a stale model.safetensors from the fp32 save
    int8.to_disk(target)
    assert not (target / "transformer" / WEIGHTS_FILE).exists()
    again = spacy.load(target, config={"components.transformer.model.quantize": "int8"})
    assert all(numpy.allclose(a, b, atol=1e-6) for a, b in zip(expected, _probs(again)))
