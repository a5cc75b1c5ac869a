import pytest


@pytest.fixture(scope="module")
def model(trained_pipeline, tmp_path_factory):
    """The tests' briefly trained pipeline on disk, for annotate runs whose records a report reads."""
    nlp, _ = trained_pipeline
    path = tmp_path_factory.mktemp("report_model") / "model"
    nlp.to_disk(path)
    return path
