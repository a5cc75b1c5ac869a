"""tuning/search.py: the one default grid, and the score-key objective."""
import inspect

import pytest

from spacy_paraphrase.cli.cross_tune import cross_tune
from spacy_paraphrase.cli.tune import tune
from spacy_paraphrase.tuning import classifier, spans
from spacy_paraphrase.tuning.search import DEFAULT_VALUES, grid, score_key_objective


def test_the_default_grid_is_written_once_and_every_default_is_it():
    assert DEFAULT_VALUES == grid() and len(DEFAULT_VALUES) == 19
    assert DEFAULT_VALUES[0] == 0.05 and DEFAULT_VALUES[-1] == 0.95 and DEFAULT_VALUES[2] == 0.15
    defaults = inspect.signature(tune).parameters
    assert grid(defaults["start"].default, defaults["end"].default, defaults["n_trials"].default) == DEFAULT_VALUES
    for function in (spans.tune, spans.tune_decoding, spans.cross_tuned_scores, classifier.tune,
                     classifier.candidate_values, classifier.cross_tuned_scores):
        assert inspect.signature(function).parameters["values"].default is DEFAULT_VALUES, function
    assert "values" not in inspect.signature(cross_tune).parameters  # cross-tune always tries the default grid


def test_grid_rounds_to_six_decimals():
    assert grid(0.1, 0.2, 3) == (0.1, 0.15, 0.2)
    assert grid(0.0, 1.0, 4) == (0.0, 0.333333, 0.666667, 1.0)


def test_score_key_objective_ranks_none_last_and_names_the_known_keys():
    objective = score_key_objective("x_f")
    assert objective({"x_f": 0.5}) == 0.5 and objective({"x_f": None}) == float("-inf")
    with pytest.raises(ValueError, match="Unknown score 'x_f' to tune on; the scorer gives: x_acc"):
        objective({"x_acc": 0.2, "name": "x"})
