"""Tuning the decision threshold of a pair_classifier (library and CLI)."""
import json

import numpy
import pytest
import spacy
from spacy.tokens import DocBin
from spacy.training import Example
from thinc.api import Adam, fix_random_seed
from typer.testing import CliRunner

import spacy_paraphrase.pair_classifier.component  # noqa: F401  (registers the factory)
from spacy_paraphrase import make_pair_doc
from spacy_paraphrase.cli import app
from spacy_paraphrase.tuning.classifier import candidate_values, check_tunable, cross_tuned_scores, score_docs, sweep, tune
from spacy_paraphrase.tuning.search import DEFAULT_VALUES

POS, NEG = "IS_PARAPHRASE", "NOT_PARAPHRASE"
NAME = "pair_classifier"
CFG = {"labels": [POS, NEG], "exclusive_classes": True, "positive_label": POS, "threshold": 0.5}
runner = CliRunner()


def _examples(n=20, noise=0.0, seed=0):
    """A classifier that over-predicts paraphrases (as on MultiPIT): gold
    paraphrases get p(positive) 0.85-0.95, the others 0.55-0.8, so the
    default threshold 0.5 calls every pair a paraphrase."""
    rng = numpy.random.default_rng(seed)
    nlp = spacy.blank("en")
    out = []
    for i in range(n):
        gold = i % 2 == 0
        ref = make_pair_doc(nlp, "a b c", "d e")
        pred = make_pair_doc(nlp, "a b c", "d e")
        ref.cats = {POS: float(gold), NEG: float(not gold)}
        p = (0.85 + 0.1 * rng.random()) if gold else (0.55 + 0.25 * rng.random())
        p = float(numpy.clip(p + noise * rng.standard_normal(), 0.0, 1.0))
        pred.cats = {POS: p, NEG: 1.0 - p}
        out.append(Example(pred, ref))
    return out


def test_sweep_rescores_without_touching_the_docs():
    examples = _examples()
    before = [dict(eg.predicted.cats) for eg in examples]
    results = sweep(examples, CFG, NAME, [0.5, 0.82, 0.99])
    assert [r["value"] for r in results] == [0.5, 0.82, 0.99]
    assert results[0][f"{NAME}_acc"] == 0.5 and results[0][f"{NAME}_pos_r"] == 1.0
    assert results[1][f"{NAME}_acc"] == 1.0 and results[1][f"{NAME}_macro_f"] == 1.0
    assert results[2][f"{NAME}_pos_r"] == 0.0
    assert [dict(eg.predicted.cats) for eg in examples] == before


def test_tune_separates_the_classes_on_macro_f():
    examples = _examples()
    best = tune(examples, CFG, NAME)
    para = [eg.predicted.cats[POS] for eg in examples if eg.reference.cats[POS]]
    other = [eg.predicted.cats[POS] for eg in examples if not eg.reference.cats[POS]]
    assert max(other) < best["threshold"] <= min(para)
    assert score_docs(examples, dict(CFG, **best), NAME)[f"{NAME}_acc"] == 1.0
    # tuning on the positive F1 alone keeps the lowest threshold that finds every paraphrase
    by_pos_f = tune(examples, CFG, NAME, values=[0.05, 0.5, 0.85], objective=lambda s: s[f"{NAME}_pos_r"])
    assert by_pos_f["threshold"] == 0.05


def test_cross_tuning_is_honest():
    examples = _examples()
    clean = cross_tuned_scores(examples, CFG, NAME, folds=4, repeats=2)
    assert clean["scores"][f"{NAME}_acc"] == 1.0
    highest_other = max(eg.predicted.cats[POS] for eg in examples if not eg.reference.cats[POS])
    assert len(clean["chosen"]) == 8 and all(highest_other < c["threshold"] <= 0.85 for c in clean["chosen"])
    noisy = _examples(n=60, noise=0.1, seed=1)
    optimistic = score_docs(noisy, dict(CFG, **tune(noisy, CFG, NAME)), NAME)[f"{NAME}_macro_f"]
    held_out = cross_tuned_scores(noisy, CFG, NAME, folds=4, repeats=3)["scores"][f"{NAME}_macro_f"]
    assert held_out < optimistic
    # far better than the untuned threshold on the same pairs
    assert held_out > score_docs(noisy, CFG, NAME)[f"{NAME}_macro_f"] + 0.2
    with pytest.raises(ValueError, match="folds"):
        cross_tuned_scores(noisy, CFG, NAME, folds=1)


def test_only_a_deciding_threshold_is_tuned():
    check_tunable(CFG)
    check_tunable(dict(CFG, exclusive_classes=False, positive_label=None))
    for cfg in (dict(CFG, labels=["A", "B", "C"], positive_label="A"), dict(CFG, positive_label=None)):
        with pytest.raises(ValueError, match="decides nothing to tune"):
            sweep(_examples(n=4), cfg, NAME, [0.5])
    # non-exclusive labels: each label is decided by the threshold
    nlp = spacy.blank("en")
    ref = make_pair_doc(nlp, "a", "b")
    pred = make_pair_doc(nlp, "a", "b")
    ref.cats, pred.cats = {"X": 1.0, "Y": 0.0}, {"X": 0.7, "Y": 0.4}
    cfg = {"labels": ["X", "Y"], "exclusive_classes": False, "positive_label": None, "threshold": 0.5}
    accs = [r[f"{NAME}_acc"] for r in sweep([Example(pred, ref)], cfg, NAME, [0.3, 0.5, 0.8])]
    assert accs == [0.0, 1.0, 0.0]


BINARY = [
    ("my 20th time doing it", "you have been doing this", True),
    ("the weather was awful", "terrible weather indeed", True),
    ("I bought a car", "what about lunch ?", False),
    ("we won the game", "the stock market fell", False),
]


@pytest.fixture(scope="module")
def classifier_dir(tiny_bert, tmp_path_factory):
    """A binary pair_classifier on the tiny BERT, trained briefly, saved with
    its reference pairs."""
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("pair_classifier", config={
        "positive_label": POS, "model": {"dropout": 0.0, "tok2vec": {"name": tiny_bert}}})
    examples = []
    for a, b, label in BINARY:
        ref = make_pair_doc(nlp, a, b)
        ref.cats = {POS: float(label), NEG: float(not label)}
        examples.append(Example(make_pair_doc(nlp, a, b), ref))
    nlp.initialize(lambda: examples)
    opt = Adam(1e-3)
    for _ in range(20):
        nlp.update(examples, sgd=opt, drop=0.0)
    nlp.add_pipe("sentencizer")  # a component with no threshold
    root = tmp_path_factory.mktemp("classifier")
    nlp.to_disk(root / "model")
    DocBin(docs=[eg.reference for eg in examples] * 2).to_disk(root / "dev.spacy")
    return root


def test_tune_on_a_pair_classifier_saves_it(classifier_dir, tmp_path):
    model, data = classifier_dir / "model", classifier_dir / "dev.spacy"
    sweep_json, tuned = tmp_path / "sweep.json", tmp_path / "tuned"
    result = runner.invoke(app, ["tune", str(model), str(data), "--n-trials", "3", "--n-quantiles", "0",
                                 "--output", str(sweep_json), "--save-to", str(tuned)])
    assert result.exit_code == 0, result.output
    payload = json.loads(sweep_json.read_text())
    assert payload["objective"] == f"{NAME}_macro_f"
    assert [r["value"] for r in payload["sweep"]] == pytest.approx([0.05, 0.5, 0.95])
    # by default the grid is joined by quantiles of the pairs' p(positive)
    result = runner.invoke(app, ["tune", str(model), str(data), "--n-trials", "3", "--n-quantiles", "1",
                                 "--output", str(sweep_json)])
    assert result.exit_code == 0, result.output
    probs = [doc.cats[POS] for doc in spacy.load(model).pipe(
        DocBin().from_disk(data).get_docs(spacy.blank("en").vocab))]
    expected = sorted({0.05, 0.5, 0.95, round(float(numpy.median(probs)), 6)})
    assert [r["value"] for r in json.loads(sweep_json.read_text())["sweep"]] == pytest.approx(expected)
    best = max(payload["sweep"], key=lambda r: r[f"{NAME}_macro_f"])
    assert payload["best"] == best["value"]
    loaded = spacy.load(tuned)
    assert loaded.get_pipe(NAME).cfg["threshold"] == pytest.approx(best["value"])
    assert loaded.config["components"][NAME]["threshold"] == pytest.approx(best["value"])
    assert spacy.load(model).get_pipe(NAME).cfg["threshold"] == 0.5
    for bad_args, message in (
        (["--key", "highlight_threshold"], "one threshold to tune"),
        (["--highlight-scale", "turn_max"], "has no highlights"),
        (["--scores-key", "nope"], "Unknown score 'nope'"),
        (["--pipe", "sentencizer"], "is neither a paraphrase_spans"),
        (["--pipe", "nope"], "No component 'nope'"),
    ):
        bad = runner.invoke(app, ["tune", str(model), str(data), "--n-trials", "1"] + bad_args)
        assert bad.exit_code == 1 and message in bad.output, bad.output
    bad = runner.invoke(app, ["tune", str(model), str(data), "--n-quantiles", "-1"])
    assert bad.exit_code == 2 and "--n-quantiles" in bad.output  # refused before the model loads


def test_cross_tune_on_a_pair_classifier(classifier_dir, tmp_path):
    model, data = classifier_dir / "model", classifier_dir / "dev.spacy"
    out = tmp_path / "cross.json"
    args = ["cross-tune", str(model), str(data), "-k", "2", "--repeats", "2", "--output", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    payload = json.loads(out.read_text())
    assert payload["objectives"] == {"threshold": f"{NAME}_macro_f"}
    assert len(payload["chosen"]) == 4 and set(payload["chosen"][0]) == {"threshold"}
    assert {f"{NAME}_acc", f"{NAME}_macro_f", f"{NAME}_pos_f"} <= set(payload["scores"])
    bad = runner.invoke(app, args + ["--highlight-scale", "turn_max"])
    assert bad.exit_code == 1 and "has no highlights" in bad.output
    bad = runner.invoke(app, args + ["--pair-scores-key", f"{NAME}_nope"])
    assert bad.exit_code == 1 and "Unknown score" in bad.output


def test_the_default_component_prefers_paraphrase_spans(tiny_bert, tmp_path):
    """With both components, tune tunes paraphrase_spans unless --pipe says otherwise."""
    from tests.util import make_examples, make_nlp

    fix_random_seed(0)
    nlp = make_nlp(tiny_bert)
    nlp.add_pipe("pair_classifier", first=True, config={
        "labels": ["PARAPHRASE_PAIR", "OTHER"], "positive_label": "PARAPHRASE_PAIR",
        "model": {"dropout": 0.0, "tok2vec": {"name": tiny_bert}}})
    examples = make_examples(nlp)
    for eg in examples:
        gold = float(bool(eg.reference.cats.get("PARAPHRASE", 0.0) >= 0.5))
        eg.reference.cats.update({"PARAPHRASE_PAIR": gold, "OTHER": 1.0 - gold})
    nlp.initialize(lambda: examples)
    nlp.to_disk(tmp_path / "model")
    DocBin(docs=[eg.reference for eg in examples]).to_disk(tmp_path / "dev.spacy")
    args = ["tune", str(tmp_path / "model"), str(tmp_path / "dev.spacy"), "--n-trials", "1",
            "--output", str(tmp_path / "sweep.json")]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "Tuning component 'paraphrase_spans'" in " ".join(result.output.split())
    assert json.loads((tmp_path / "sweep.json").read_text())["objective"] == "paraphrase_spans_pair_macro_f"
    result = runner.invoke(app, args + ["--pipe", NAME])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "sweep.json").read_text())["objective"] == f"{NAME}_macro_f"


@spacy.registry.scorers("test.pair_scorer_preferring_low_thresholds.v1")
def _make_low_threshold_scorer():
    """The built-in scores plus ``{name}_low``, which only the lowest threshold maximizes."""
    from spacy_paraphrase.pair_classifier.scorer import score_pair_classifier

    def score(examples, **kwargs):
        scores = score_pair_classifier(examples, **kwargs)
        scores[f"{kwargs['name']}_low"] = -float(kwargs["threshold"])
        return scores

    return score


def test_tuning_uses_the_given_scorer():
    from spacy_paraphrase.tuning.classifier import default_objective
    from spacy_paraphrase.tuning.search import score_key_objective

    examples, scorer = _examples(), _make_low_threshold_scorer()
    low = score_key_objective(f"{NAME}_low")
    assert [r[f"{NAME}_low"] for r in sweep(examples, CFG, NAME, [0.3, 0.7], scorer)] == [-0.3, -0.7]
    assert tune(examples, CFG, NAME, objective=low, scorer=scorer) == {"threshold": DEFAULT_VALUES[0]}
    assert tune(examples, CFG, NAME, objective=default_objective(NAME)[1], scorer=scorer) == tune(examples, CFG, NAME)
    crossed = cross_tuned_scores(examples, CFG, NAME, folds=2, repeats=1, objective=low, scorer=scorer)
    assert crossed["scores"][f"{NAME}_low"] == -DEFAULT_VALUES[0]
    with pytest.raises(ValueError, match="Unknown score"):  # the built-in scorer has no such key
        tune(examples, CFG, NAME, objective=low)


def test_the_commands_tune_on_the_configured_scorer(classifier_dir, tmp_path):
    """tune and cross-tune score with [components.pair_classifier.scorer], not the built-in."""
    import shutil

    model, data = tmp_path / "model", classifier_dir / "dev.spacy"
    shutil.copytree(classifier_dir / "model", model)
    config = (model / "config.cfg").read_text()
    assert config.count('"spacy_paraphrase.pair_classifier_scorer.v1"') == 1
    config = config.replace('"spacy_paraphrase.pair_classifier_scorer.v1"',
                            '"test.pair_scorer_preferring_low_thresholds.v1"')
    (model / "config.cfg").write_text(config)
    out = tmp_path / "out.json"
    result = runner.invoke(app, ["tune", str(model), str(data), "--n-trials", "3", "--n-quantiles", "0",
                                 "--scores-key", f"{NAME}_low", "--output", str(out)])
    assert result.exit_code == 0, result.output
    payload = json.loads(out.read_text())
    assert payload["best"] == pytest.approx(0.05)
    assert [r[f"{NAME}_low"] for r in payload["sweep"]] == pytest.approx([-0.05, -0.5, -0.95])
    result = runner.invoke(app, ["cross-tune", str(model), str(data), "-k", "2", "--repeats", "1", "--n-quantiles", "0",
                                 "--pair-scores-key", f"{NAME}_low", "--output", str(out)])
    assert result.exit_code == 0, result.output
    payload = json.loads(out.read_text())
    assert [c["threshold"] for c in payload["chosen"]] == [DEFAULT_VALUES[0]] * 2
    assert payload["scores"][f"{NAME}_low"] == pytest.approx(-DEFAULT_VALUES[0])


def _saturated(n=40, seed=0):
    """A classifier after long training: gold paraphrases at p 0.99-0.999,
    the others spread over 0.001-0.995 with half of them at 0.96-0.985, above
    every value of the fixed grid."""
    rng = numpy.random.default_rng(seed)
    nlp = spacy.blank("en")
    out = []
    for i in range(n):
        gold = i % 2 == 0
        ref, pred = make_pair_doc(nlp, "a b", "c"), make_pair_doc(nlp, "a b", "c")
        ref.cats = {POS: float(gold), NEG: float(not gold)}
        if gold:
            p = 0.99 + 0.009 * rng.random()
        elif i % 4 == 1:
            p = 0.96 + 0.025 * rng.random()
        else:
            p = 0.001 + 0.5 * rng.random()
        pred.cats = {POS: p, NEG: 1.0 - p}
        out.append(Example(pred, ref))
    return out


def test_candidates_follow_the_probabilities():
    examples = _saturated()
    probs = numpy.array([eg.predicted.cats[POS] for eg in examples])
    values = candidate_values(examples, CFG, (0.5,), 3)
    assert values == tuple(sorted({0.5, *(round(float(q), 6) for q in numpy.quantile(probs, [0.25, 0.5, 0.75]))}))
    assert candidate_values(examples, CFG, (0.5, 0.2), 0) == (0.2, 0.5)
    # non-exclusive labels: every label's probability is decided
    cfg = dict(CFG, exclusive_classes=False, positive_label=None)
    both = numpy.array([eg.predicted.cats[label] for eg in examples for label in (POS, NEG)])
    assert candidate_values(examples, cfg, (), 1) == (round(float(numpy.median(both)), 6),)
    with pytest.raises(ValueError, match="n_quantiles"):
        candidate_values(examples, CFG, (0.5,), -1)
    # the fixed grid tops out at 0.95 and cannot separate the classes; the quantiles can
    para = [eg.predicted.cats[POS] for eg in examples if eg.reference.cats[POS]]
    other = [eg.predicted.cats[POS] for eg in examples if not eg.reference.cats[POS]]
    grid_only = tune(examples, CFG, NAME, n_quantiles=0)["threshold"]
    assert grid_only <= 0.95 < max(other)
    best = tune(examples, CFG, NAME)["threshold"]
    assert max(other) < best <= min(para)
    held_out = cross_tuned_scores(examples, CFG, NAME, folds=4, repeats=2)["scores"][f"{NAME}_macro_f"]
    grid_held_out = cross_tuned_scores(examples, CFG, NAME, folds=4, repeats=2, n_quantiles=0)["scores"]
    assert held_out > grid_held_out[f"{NAME}_macro_f"] + 0.1
