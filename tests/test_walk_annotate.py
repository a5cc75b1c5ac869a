"""scripts/walk_annotate.py: the walk of annotate's input path (the house issue's measure)."""
import pytest

from scripts.walk_annotate import regroup, stops


def test_a_fold_joins_two_modules_and_a_left_out_module_drops_out_of_the_walk():
    calls = [("a", "f"), ("b", "g"), ("a", "h"), ("c", "i"), ("b", "j")]
    assert stops(calls) == ["a", "b", "a", "c", "b"]
    assert stops(regroup(calls, {"b": "a"})) == ["a", "c", "a"]
    assert stops(regroup(calls, leave_out={"c"})) == ["a", "b", "a", "b"]
    assert stops(regroup(calls, {"c": "b"}, {"a"})) == ["b"]


@pytest.mark.slow
def test_the_walk_lists_the_input_path_outside_the_model(tmp_path):
    from scripts.walk_annotate import MODEL, stops, walk

    calls = walk(tmp_path)
    names = {f"{module.rsplit('.', 1)[-1]}.{name}" for module, name in calls}
    # the reading, the pairing and the writing of a record are on it; the model's modules are not
    assert {"annotate.annotate", "pairing.DialogCorpus.pairs", "readers.read_mediasum", "record_format.make_record"} <= names
    assert not any(module.startswith(MODEL) for module, _ in calls)
    assert not any("<" in name for _, name in calls)
    assert len(calls) == len(set(calls))
    assert stops([("a", "f"), ("a", "g"), ("b", "h"), ("a", "i")]) == ["a", "b", "a"]
