"""saving.py: the atomic file write and the staged directory swap every
writer uses, their staging folders, and the staged swap of `--save-to`."""
import os
import pathlib

import pytest
import spacy

from spacy_paraphrase import saving
from spacy_paraphrase.saving import (
    STAGING_MARK,
    atomic_write,
    save_pipeline_to,
    staged_swap,
    swap_staging_dir,
)


def fail_the_swap_into(target, monkeypatch):
    """Renaming the staged ``new`` directory onto ``target`` fails (a full or read-only parent)."""
    real_rename = pathlib.Path.rename

    def failing_rename(self, dest):
        if self.name == "new" and pathlib.Path(dest) == target:
            raise OSError("no space left on device")
        return real_rename(self, dest)

    monkeypatch.setattr(pathlib.Path, "rename", failing_rename)


def test_staging_clears_what_a_killed_run_left_and_nothing_else(tmp_path):
    target = tmp_path / "int8"
    left = swap_staging_dir(target)  # a run killed after this point leaves the folder behind
    (left / "pipeline").mkdir()
    mine = tmp_path / ".int8.notes"  # the user's, unmarked
    mine.mkdir()
    other = swap_staging_dir(tmp_path / "int8.b")  # another target's staging (its name matches .int8.*)
    staging = swap_staging_dir(target)
    assert not left.exists() and mine.is_dir() and other.is_dir()
    assert staging.parent == tmp_path and staging.name.startswith(".int8.") and (staging / STAGING_MARK).is_file()


def _blank(name):
    nlp = spacy.blank("en")
    nlp.meta["name"] = name
    return nlp


def test_save_to_replaces_an_earlier_pipeline_and_leaves_no_staging(tmp_path):
    target = tmp_path / "tuned"
    save_pipeline_to(_blank("first"), target)
    save_pipeline_to(_blank("second"), target)
    assert spacy.load(target).meta["name"] == "second"
    assert [p.name for p in tmp_path.iterdir()] == ["tuned"]


def test_save_to_restores_the_earlier_pipeline_when_the_swap_fails(tmp_path, monkeypatch):
    """The new pipeline cannot be renamed into place (e.g. a full or read-only
    parent): the earlier pipeline is put back at the target, the error is
    raised, and no staging folder is left."""
    target = tmp_path / "tuned"
    save_pipeline_to(_blank("earlier"), target)
    fail_the_swap_into(target, monkeypatch)
    with pytest.raises(OSError, match="no space"):
        save_pipeline_to(_blank("new"), target)
    monkeypatch.undo()
    assert spacy.load(target).meta["name"] == "earlier"
    assert [p.name for p in tmp_path.iterdir()] == ["tuned"]


def test_atomic_write_replaces_the_file_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "out.json"
    path.write_text("old")
    atomic_write(path, lambda tmp: tmp.write_text("new"))
    assert path.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_atomic_write_leaves_the_old_file_when_the_write_fails(tmp_path):
    path = tmp_path / "out.json"
    path.write_text("old")

    def half_written(tmp):
        tmp.write_text("ne")
        raise OSError("no space left on device")

    with pytest.raises(OSError, match="no space"):
        atomic_write(path, half_written)
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_atomic_write_removes_its_temporary_file_when_the_rename_fails(tmp_path, monkeypatch):
    path = tmp_path / "out.json"
    path.write_text("old")

    def refused(src, dst):
        raise PermissionError("read-only")

    monkeypatch.setattr(saving.os, "replace", refused)
    with pytest.raises(PermissionError):
        atomic_write(path, lambda tmp: tmp.write_text("new"))
    monkeypatch.undo()
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_atomic_write_uses_a_new_temporary_name_each_time(tmp_path):
    """Two writers of one path (threads of the LLM cache) never share a
    temporary file."""
    seen = []
    for text in ("a", "b"):
        atomic_write(tmp_path / "f", lambda tmp: (seen.append(tmp.name), tmp.write_text(text)))
    assert len(set(seen)) == 2 and all(n.startswith(".f.") and n.endswith(".tmp") for n in seen)
    assert (tmp_path / "f").read_text() == "b"


def _folder(path, text):
    path.mkdir()
    (path / "file.txt").write_text(text)


def test_staged_swap_creates_and_replaces_a_directory(tmp_path):
    target = tmp_path / "out"
    assert staged_swap(target, lambda new: _folder(new, "first"))
    assert staged_swap(target, lambda new: _folder(new, "second"))
    assert (target / "file.txt").read_text() == "second"
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_staged_swap_keeps_the_old_directory_when_the_build_fails(tmp_path):
    target = tmp_path / "out"
    staged_swap(target, lambda new: _folder(new, "old"))

    def failing(new):
        _folder(new, "half")
        raise ValueError("the build failed")

    with pytest.raises(ValueError, match="build failed"):
        staged_swap(target, failing)
    assert (target / "file.txt").read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_staged_swap_restores_the_old_directory_when_the_swap_fails(tmp_path, monkeypatch):
    target = tmp_path / "out"
    staged_swap(target, lambda new: _folder(new, "old"))
    fail_the_swap_into(target, monkeypatch)
    with pytest.raises(OSError, match="no space"):
        staged_swap(target, lambda new: _folder(new, "new"))
    monkeypatch.undo()
    assert (target / "file.txt").read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_staged_swap_keeps_what_a_concurrent_writer_put_there_first(tmp_path, monkeypatch):
    """With keep_concurrent, a target another process completed between our
    two renames is kept (backbone install), and others' staging folders are
    not cleared."""
    target = tmp_path / "out"
    theirs = swap_staging_dir(target)  # another install, still building
    real_rename = pathlib.Path.rename

    def raced(self, dest):
        if self.name == "new" and pathlib.Path(dest) == target:
            _folder(target, "theirs")  # the other install won
            raise OSError(39, "Directory not empty")
        return real_rename(self, dest)

    monkeypatch.setattr(pathlib.Path, "rename", raced)
    done = staged_swap(target, lambda new: _folder(new, "mine"), keep_concurrent=lambda t: (t / "file.txt").is_file())
    monkeypatch.undo()
    assert done is False and (target / "file.txt").read_text() == "theirs"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["out", theirs.name])


def test_staged_swap_syncs_the_new_files_before_the_swap(tmp_path, monkeypatch):
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(saving.os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    staged_swap(tmp_path / "out", lambda new: _folder(new, "x"))
    assert len(synced) == 1
