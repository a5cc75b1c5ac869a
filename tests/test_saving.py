"""saving.py: staging folders of the commands that write a pipeline, and the
staged swap of `--save-to`."""
import pathlib

import pytest
import spacy

from spacy_paraphrase.saving import STAGING_MARK, save_pipeline_to, swap_staging_dir


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
    real_rename = pathlib.Path.rename

    def failing_rename(self, dest):
        if self.name == "pipeline" and pathlib.Path(dest) == target:
            raise OSError("no space left on device")
        return real_rename(self, dest)

    monkeypatch.setattr(pathlib.Path, "rename", failing_rename)
    with pytest.raises(OSError, match="no space"):
        save_pipeline_to(_blank("new"), target)
    monkeypatch.undo()
    assert spacy.load(target).meta["name"] == "earlier"
    assert [p.name for p in tmp_path.iterdir()] == ["tuned"]
