import pytest
import spacy


@pytest.fixture(scope="session")
def annotate_model(trained_pipeline, tmp_path_factory):
    """The tests' briefly trained pipeline on disk, with thresholds 0 so that
    every pair passes and every token is highlighted (spans then cross the
    utterance boundaries of merged turns)."""
    nlp, _ = trained_pipeline
    path = tmp_path_factory.mktemp("annotate_model") / "model"
    nlp.to_disk(path)
    loaded = spacy.load(path)
    loaded.get_pipe("paraphrase_spans").cfg.update(threshold=0.0, highlight_threshold=0.0)
    loaded.to_disk(path)
    return str(path)
