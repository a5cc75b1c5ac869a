"""studies.run_distillation with the tests' tiny pipeline as the teacher and
its trainings already done (a stopped run goes on): the silver pairs are
written through `llm silver --soft`, every system is scored on dev against the
gold labels, and the agreement with the teacher is measured; a student that is
the teacher agrees on everything, one that highlights nothing does not."""
import json
import re

import pytest

from studies import run_distillation
from tests.test_docs_run import contextdep_tsv

ABSOLUTE_PATH = re.compile(r'(^|[\s"`(])/[A-Za-z]')


@pytest.fixture(scope="module")
def study(trained_pipeline, tmp_path_factory):
    nlp, _ = trained_pipeline
    root = tmp_path_factory.mktemp("distill")
    data = root / "data"
    data.mkdir()
    contextdep_tsv(data / "train.tsv")
    contextdep_tsv(data / "dev.tsv")
    nlp.to_disk(root / "teacher")
    work = root / "work"
    (work / "student").mkdir(parents=True)
    (work / "gold").mkdir()
    nlp.to_disk(work / "student" / "model-best")  # the student is the teacher
    mute = nlp.get_pipe("paraphrase_spans")
    saved = dict(mute.cfg)
    mute.cfg["threshold"] = mute.cfg["highlight_threshold"] = 2.0  # decides "no" everywhere
    try:
        nlp.to_disk(work / "gold" / "model-best")
    finally:
        mute.cfg.update(saved)
    output = root / "distillation.json"
    code = run_distillation.main([str(data), "--work", str(work), "--teacher", str(root / "teacher"),
                                  "--output", str(output)])
    return code, work, json.loads(output.read_text())


def test_silver_pairs_are_written_from_the_teacher(study):
    code, work, result = study
    assert code == 0
    assert (work / "corpus" / "silver.spacy").stat().st_size > 0
    assert result["dev_pairs"] == 9


def test_agreement_with_the_teacher(study):
    _, _, result = study
    student, gold = result["systems"]["student"], result["systems"]["gold"]
    assert student["pair_decisions_as_teacher"] == 1.0
    assert student["jaccard_first_to_teacher"] == student["jaccard_second_to_teacher"] == 1.0
    for key in ("pair_acc", "jaccard_first", "jaccard_second"):
        assert isinstance(student[key], float) and 0.0 <= student[key] <= 1.0
        assert student[key] == result["systems"]["teacher"][key]
    assert gold["pair_acc"] != student["pair_acc"] or gold["jaccard_first"] != student["jaccard_first"]
    # the mute "gold" pipeline agrees only on the pairs the teacher calls "no"
    assert gold["pair_decisions_as_teacher"] < 1.0
    assert gold["jaccard_first_to_teacher"] < 1.0


def test_result_carries_no_machine_paths(study):
    _, _, result = study
    assert not ABSOLUTE_PATH.search(json.dumps(result))
    assert result["command"].startswith("python -m studies.run_distillation")


def test_the_students_are_compared_pair_by_pair(study):
    """The student that is the teacher agrees on every pair the mute gold
    pipeline gets wrong, never the other way round, and its Jaccards to the
    teacher are at least the gold one's, with an interval around the mean."""
    _, _, result = study
    against = result["student_against_gold"]
    gold = result["systems"]["gold"]
    assert against["pairs_only_gold_as_teacher"] == 0
    assert against["pairs_only_student_as_teacher"] == round((1 - gold["pair_decisions_as_teacher"]) * result["dev_pairs"])
    for side in ("first", "second"):
        mean = against[f"jaccard_{side}_to_teacher_difference"]
        low, high = against[f"jaccard_{side}_to_teacher_difference_ci95"]
        assert mean == pytest.approx(1.0 - gold[f"jaccard_{side}_to_teacher"])
        assert low <= mean <= high
