"""Staging folders of the commands that write a pipeline (saving.py)."""
from spacy_paraphrase.saving import STAGING_MARK, staging_dir


def test_staging_clears_what_a_killed_run_left_and_nothing_else(tmp_path):
    target = tmp_path / "int8"
    left = staging_dir(target)  # a run killed after this point leaves the folder behind
    (left / "pipeline").mkdir()
    mine = tmp_path / ".int8.notes"  # the user's, unmarked
    mine.mkdir()
    other = staging_dir(tmp_path / "int8.b")  # another target's staging (its name matches .int8.*)
    staging = staging_dir(target)
    assert not left.exists() and mine.is_dir() and other.is_dir()
    assert staging.parent == tmp_path and staging.name.startswith(".int8.") and (staging / STAGING_MARK).is_file()
