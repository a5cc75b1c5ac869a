import json

import pytest
import spacy
from spacy.tokens import DocBin
from typer.testing import CliRunner

from spacy_paraphrase.cli import app
from spacy_paraphrase.cli._util import process
from spacy_paraphrase.tuning.choice import tuning_for
from spacy_paraphrase.corpus import PairCorpus

from tests.util import HEADER, row

runner = CliRunner()


@pytest.fixture
def mini_tsv(tmp_path):
    rows = [
        row("Q1", "A", 1, "my  20th time", [1, 0, 1, 1], "doing this a while", [1, 1, 0, 1]),
        row("Q1", "B", 0, "my  20th time", [0, 0, 0, 0], "doing this a while", [0, 0, 0, 0]),
        row("Q2", "A", 0, "the car broke", [0, 0, 0], "lunch time", [0, 0]),
    ]
    path = tmp_path / "mini.tsv"
    path.write_text(HEADER + "".join(rows), encoding="utf-8")
    return path


def test_convert_and_reader_keep_turns_and_indices(tmp_path, mini_tsv):
    out = tmp_path / "out.spacy"
    result = runner.invoke(app, ["convert", "contextdep", str(mini_tsv), str(out), "--mode", "soft"])
    assert result.exit_code == 0, result.output
    nlp = spacy.blank("en")
    docs = list(DocBin().from_disk(out).get_docs(nlp.vocab))
    assert len(docs) == 2
    assert docs[0].spans["paraphrase"].attrs["votes"] == [1, 2]
    examples = list(PairCorpus(out)(nlp))
    for eg, ref in zip(examples, docs):
        assert [t.text for t in eg.predicted] == [t.text for t in ref]
        assert "paraphrase" not in eg.predicted.spans  # no gold leaks into the input
        assert [(s.start, s.end) for s in eg.predicted.spans["turns"]] == [
            (s.start, s.end) for s in ref.spans["turns"]
        ]


def test_convert_bad_file_exits_with_line(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text(HEADER + row("Q", "A", 1, "a b", [1], "c", [1]), encoding="utf-8")
    result = runner.invoke(app, ["convert", "contextdep", str(bad), str(tmp_path / "o.spacy")])
    assert result.exit_code == 1
    assert "line 2" in result.output
    result = runner.invoke(app, ["convert", "contextdep", str(bad), str(tmp_path / "o.spacy"), "--skip-bad"])
    assert result.exit_code == 1  # every row bad: nothing to write
    assert "Skipped 1 bad rows" in result.output and not (tmp_path / "o.spacy").exists()
    bad.write_text(HEADER + row("Q", "A", 1, "a b", [1], "c", [1]) + row("R", "A", 0, "d e", [0, 0], "f", [0]),
                   encoding="utf-8")
    result = runner.invoke(app, ["convert", "contextdep", str(bad), str(tmp_path / "o.spacy"), "--skip-bad"])
    assert result.exit_code == 0, result.output
    assert "Skipped 1 bad rows" in result.output


def test_baseline_evaluate_and_tune(tmp_path, mini_tsv):
    data = tmp_path / "dev.spacy"
    assert runner.invoke(app, ["convert", "contextdep", str(mini_tsv), str(data)]).exit_code == 0
    model = tmp_path / "lexical"
    assert runner.invoke(app, ["baseline", "lexical", str(model)]).exit_code == 0
    metrics = tmp_path / "m.json"
    result = runner.invoke(app, ["evaluate", str(model), str(data), "--output", str(metrics)])
    assert result.exit_code == 0, result.output
    scores = json.loads(metrics.read_text())
    # Q1 shares no content word across turns -> lexical says no; Q2 neither: acc 1/2
    assert scores["paraphrase_spans_pair_acc"] == pytest.approx(0.5)
    assert "paraphrase_spans_jaccard_first_abs50" in scores
    # the paper's metrics: in the file and said in the output
    for key in ("pair_p", "pair_r", "pair_f", "jaccard_first_n", "jaccard_second_n"):
        assert f"paraphrase_spans_paper_{key}" in scores
    assert "paraphrase_spans: the paper's metrics" in result.output
    assert "paraphrase_spans_paper_pair_f" in result.output
    sweep = tmp_path / "t.json"
    result = runner.invoke(
        app, ["tune", str(model), str(data), "--key", "highlight_threshold", "--n-trials", "3", "--output", str(sweep)]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(sweep.read_text())
    assert [r["value"] for r in payload["sweep"]] == pytest.approx([0.05, 0.5, 0.95])
    # the highlight rule can be chosen for one evaluation; an unknown one is an error
    result = runner.invoke(app, ["evaluate", str(model), str(data), "--highlight-scale", "turn_max"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["evaluate", str(model), str(data), "--highlight-scale", "top"])
    assert result.exit_code == 1 and "Unknown highlight_scale 'top'" in result.output


@pytest.fixture
def model_and_data(tmp_path, trained_pipeline):
    """(pipeline directory, .spacy file of its examples' gold Docs, the examples)."""
    nlp, examples = trained_pipeline
    model, data = tmp_path / "model", tmp_path / "dev.spacy"
    nlp.to_disk(model)
    DocBin(docs=[eg.reference for eg in examples]).to_disk(data)
    return model, data, examples


def test_tune_save_updates_cfg_and_config(tmp_path, model_and_data):
    model, data, _ = model_and_data
    result = runner.invoke(
        app, ["tune", str(model), str(data), "--key", "threshold", "--start", "0.3", "--end", "0.3", "--n-trials", "1", "--save"]
    )
    assert result.exit_code == 0, result.output
    loaded = spacy.load(model)
    assert loaded.get_pipe("paraphrase_spans").cfg["threshold"] == pytest.approx(0.3)
    assert loaded.config["components"]["paraphrase_spans"]["threshold"] == pytest.approx(0.3)
    bad = runner.invoke(app, ["tune", str(model), str(data), "--n-trials", "1", "--scores-key", "nope"])
    assert bad.exit_code == 1 and "Unknown score 'nope'" in bad.output
    bad = runner.invoke(app, ["tune", str(model), str(data), "--n-trials", "1", "--n-quantiles", "19"])
    assert bad.exit_code == 1 and "--n-quantiles is for a pair_classifier" in bad.output
    # --highlight-scale is used for the sweep and saved with the threshold
    tuned = tmp_path / "tuned"
    result = runner.invoke(
        app, ["tune", str(model), str(data), "--key", "highlight_threshold", "--n-trials", "2",
              "--highlight-scale", "turn_max", "--save-to", str(tuned)]
    )
    assert result.exit_code == 0, result.output
    loaded = spacy.load(tuned)
    assert loaded.get_pipe("paraphrase_spans").cfg["highlight_scale"] == "turn_max"
    assert loaded.config["components"]["paraphrase_spans"]["highlight_scale"] == "turn_max"
    assert spacy.load(model).get_pipe("paraphrase_spans").cfg["highlight_scale"] == "absolute"
    bad = runner.invoke(app, ["tune", str(model), str(data), "--n-trials", "1", "--highlight-scale", "max"])
    assert bad.exit_code == 1 and "Unknown highlight_scale 'max'" in bad.output


def test_cross_tune_objectives_from_the_command_line(tmp_path, trained_pipeline):
    nlp, examples = trained_pipeline
    from spacy.tokens import DocBin

    model = tmp_path / "model"
    nlp.to_disk(model)
    data = tmp_path / "dev.spacy"
    DocBin(docs=[eg.reference for eg in examples] * 2).to_disk(data)
    out = tmp_path / "cross.json"
    args = ["cross-tune", str(model), str(data), "-k", "2", "--repeats", "1", "--output", str(out)]
    result = runner.invoke(app, args + ["--highlight-scores-key", "paraphrase_spans_token_f"])
    assert result.exit_code == 0, result.output
    payload = json.loads(out.read_text())
    assert payload["objectives"] == {"threshold": "paraphrase_spans_pair_macro_f", "highlight_threshold": "paraphrase_spans_token_f"}
    assert len(payload["chosen"]) == 2
    bad = runner.invoke(app, args + ["--pair-scores-key", "paraphrase_spans_nope"])
    assert bad.exit_code == 1 and "Unknown score" in bad.output
    bad = runner.invoke(app, args + ["--n-quantiles", "3"])
    assert bad.exit_code == 1 and "--n-quantiles is for a pair_classifier" in bad.output
    assert payload["highlight_scale"] == "absolute"
    result = runner.invoke(app, args + ["--highlight-scale", "turn_max"])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["highlight_scale"] == "turn_max"


def threshold_sweep(nlp, examples, pipe_name, key, values):
    return tuning_for(nlp, pipe_name).find(process(nlp, examples, 8), key, values).report["sweep"]


def test_threshold_sweep_moves_pair_decisions(trained_pipeline):
    nlp, examples = trained_pipeline
    results = threshold_sweep(nlp, examples, "paraphrase_spans", "threshold", [0.0, 1.01])
    # threshold 0: every pair is a paraphrase; above 1: none is
    assert results[0]["paraphrase_spans_pair_r"] == 1.0
    assert results[1]["paraphrase_spans_pair_r"] == 0.0
    assert nlp.get_pipe("paraphrase_spans").cfg["threshold"] == 0.5  # restored
    # the sweep scores with the component's scorer (a custom one's keys come through)
    pipe = nlp.get_pipe("paraphrase_spans")
    builtin = pipe.scorer
    try:
        pipe.scorer = lambda egs, **kw: dict(builtin(egs, **kw), seen_threshold=kw["threshold"])
        results = threshold_sweep(nlp, examples, "paraphrase_spans", "threshold", [0.0, 1.01])
    finally:
        pipe.scorer = builtin
    assert [r["seen_threshold"] for r in results] == [0.0, 1.01]


def test_saving_a_threshold_never_leaves_a_mixed_or_half_written_pipeline(tmp_path, trained_pipeline, model_and_data):
    nlp, _ = trained_pipeline
    model, data, _ = model_and_data
    weights = model / "transformer" / "model"
    before = (weights.read_bytes(), weights.stat().st_mtime_ns)
    args = ["tune", str(model), str(data), "--start", "0.4", "--end", "0.4", "--n-trials", "1"]
    result = runner.invoke(app, args + ["--save"])
    assert result.exit_code == 0, result.output
    assert (weights.read_bytes(), weights.stat().st_mtime_ns) == before  # in place: only the settings files
    assert spacy.load(model).get_pipe("paraphrase_spans").cfg["threshold"] == pytest.approx(0.4)
    assert not [p.name for p in model.rglob(".*")]  # no temporary files left
    result = runner.invoke(app, args + ["--save-to", str(model)])  # the model itself: in place too
    assert result.exit_code == 0 and (weights.read_bytes(), weights.stat().st_mtime_ns) == before, result.output
    # a target that cannot be saved to is refused before the model loads
    for save in (["--save-to", str(model / "config.cfg")], []):
        bad = runner.invoke(app, ["tune", "no_such_package", str(data), "--save"] + save)
        assert bad.exit_code == 1 and "pipeline directory" in " ".join(bad.output.split()), bad.output
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    bad = runner.invoke(app, args + ["--save-to", str(foreign)])
    assert bad.exit_code == 1 and "not a pipeline directory" in bad.output
    assert [p.name for p in foreign.iterdir()] == ["notes.txt"]
    earlier = tmp_path / "tuned"
    nlp.to_disk(earlier)
    (earlier / "stray").mkdir()  # a folder only the earlier pipeline had
    result = runner.invoke(app, args + ["--save-to", str(earlier)])
    assert result.exit_code == 0, result.output
    assert not (earlier / "stray").exists()  # replaced as a whole, not mixed
    assert spacy.load(earlier).get_pipe("paraphrase_spans").cfg["threshold"] == pytest.approx(0.4)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_threshold_commands_refuse_what_cannot_be_scored(tmp_path, model_and_data):
    model, data, examples = model_and_data
    empty = tmp_path / "empty.spacy"
    DocBin().to_disk(empty)
    n = len(examples)
    for args, code, message in (
        (["evaluate", str(model), str(data), "--batch-size", "-1"], 2, "--batch-size"),  # 0: the default by device
        (["tune", str(model), str(data), "--n-trials", "0"], 2, "--n-trials"),
        (["cross-tune", str(model), str(data), "--repeats", "0"], 2, "--repeats"),
        (["evaluate", str(model), str(empty)], 1, "holds no pair Docs"),
        (["tune", str(model), str(empty)], 1, "holds no pair Docs"),
        (["cross-tune", str(model), str(data), "--folds", str(n + 1)], 1, f"Need 2 <= folds <= {n}"),
        (["check-strings", str(model), str(data), "--folds", str(n + 1)], 1, f"Need 2 <= folds <= {n}"),
        (["check-strings", str(model), str(data), "--pipe", "transformer"], 1, "No paraphrase_spans component"),
        (["tune", str(model), str(data), "--key", "highlight_scale"], 1, "--key must be one of"),
    ):
        result = runner.invoke(app, args)
        output = " ".join(result.output.split())  # messages wrap at the terminal width
        assert result.exit_code == code and message in output, (args, result.output)


def test_baseline_and_evaluate_errors_are_messages(tmp_path):
    res = runner.invoke(app, ["baseline", "psychic", str(tmp_path / "b")])
    assert res.exit_code == 1 and "Unknown baseline kind 'psychic'" in res.output
    assert runner.invoke(app, ["baseline", "lexical", str(tmp_path / "b")]).exit_code == 0
    plain = tmp_path / "plain.spacy"
    DocBin(docs=[spacy.blank("en")("one turn only")]).to_disk(plain)
    res = runner.invoke(app, ["evaluate", str(tmp_path / "b"), str(plain)])
    assert res.exit_code == 1 and isinstance(res.exception, SystemExit), res.output
    assert "is not a pair Doc" in " ".join(res.output.split())


def test_tune_tunes_the_span_decoding_and_fits_the_vote_share(tmp_path, model_and_data, mini_tsv):
    """--key decoding saves the decoding settings with the highlight threshold;
    --key vote_share fits the map to the annotator votes, saves it, and the
    loaded pipeline applies it; data without votes is refused."""
    from spacy_paraphrase import make_pair_doc
    from spacy_paraphrase.paraphrase_spans.vote_share import VoteShareMap

    model, plain_data, _ = model_and_data
    data = tmp_path / "votes.spacy"
    assert runner.invoke(app, ["convert", "contextdep", str(mini_tsv), str(data), "--mode", "majority"]).exit_code == 0
    tuned, out = tmp_path / "tuned", tmp_path / "decoding.json"
    result = runner.invoke(app, ["tune", str(model), str(data), "--key", "decoding", "--n-trials", "3",
                                 "--save-to", str(tuned), "--output", str(out)])
    assert result.exit_code == 0, result.output
    best = json.loads(out.read_text())["best"]
    assert set(best) == {"highlight_threshold", "max_gap", "trim_edges", "min_span_length", "max_spans"}
    cfg = spacy.load(tuned).get_pipe("paraphrase_spans").cfg
    assert {k: cfg[k] for k in best} == pytest.approx(best)
    out = tmp_path / "share.json"
    result = runner.invoke(app, ["tune", str(tuned), str(data), "--key", "vote_share", "--save",
                                 "--output", str(out)])
    assert result.exit_code == 0, result.output
    share_map = json.loads(out.read_text())["best"]["vote_share_map"]
    nlp = spacy.load(tuned)
    for saved in (nlp.get_pipe("paraphrase_spans").cfg["vote_share_map"],
                  nlp.config["components"]["paraphrase_spans"]["vote_share_map"]):
        assert saved["features"] == share_map["features"]
        assert saved["coef"] + [saved["intercept"]] == pytest.approx(share_map["coef"] + [share_map["intercept"]])
    doc = nlp(make_pair_doc(nlp, "we won the game", "you won it"))
    attrs = doc.spans["paraphrase"].attrs
    assert attrs["vote_share"] == pytest.approx(VoteShareMap.from_cfg(share_map).predict_doc(doc, attrs["token_probs"]))
    bad = runner.invoke(app, ["tune", str(model), str(plain_data), "--key", "vote_share"])
    assert bad.exit_code == 1 and "annotator votes" in bad.output


def test_a_pipeline_that_cannot_load_is_one_line_not_a_traceback(tmp_path):
    data = tmp_path / "dev.spacy"
    data.write_bytes(b"")
    for model in (str(tmp_path / "no_such_model"), "no_such_package_name"):
        result = runner.invoke(app, ["evaluate", model, str(data)])
        assert result.exit_code == 1 and not isinstance(result.exception, OSError)
        assert "Cannot load the pipeline" in " ".join(result.output.split())
    result = runner.invoke(app, ["tune", str(tmp_path / "no_such_model"), str(data)])
    assert result.exit_code == 1 and "Cannot load the pipeline" in " ".join(result.output.split())


def test_baseline_never_replaces_a_folder_that_is_not_a_pipeline(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "mine.txt").write_text("keep me")
    result = runner.invoke(app, ["baseline", "lexical", str(folder)])
    assert result.exit_code == 1 and "is not a pipeline directory" in " ".join(result.output.split())
    assert [p.name for p in folder.iterdir()] == ["mine.txt"]
    result = runner.invoke(app, ["baseline", "lexical", str(tmp_path / "new")])
    assert result.exit_code == 0 and (tmp_path / "new" / "config.cfg").is_file()
    result = runner.invoke(app, ["baseline", "always", str(tmp_path / "new")])  # a pipeline: replaced whole
    assert result.exit_code == 0 and '"always"' in (tmp_path / "new" / "config.cfg").read_text()


def test_batch_size_zero_means_the_device_default(monkeypatch):
    # 0 (the commands' default): 8 pairs per batch on a CPU, 64 on a GPU
    import thinc.api

    from spacy_paraphrase import evaluation

    assert evaluation.default_batch_size() == evaluation.CPU_BATCH_SIZE == 8

    class CupyOps:  # stands in for thinc's GPU ops (no GPU here)
        pass

    monkeypatch.setattr(thinc.api, "get_current_ops", lambda: CupyOps())
    assert evaluation.default_batch_size() == evaluation.GPU_BATCH_SIZE == 64


def test_each_command_is_a_plain_function_that_raises_command_error(tmp_path):
    """The commands without a model to run: their plain functions refuse bad input with a CommandError
    (the command prints its message and exits with 1), before anything is written."""
    from spacy_paraphrase.cli._util import CommandError
    from spacy_paraphrase.cli.annotate import annotate, source_options
    from spacy_paraphrase.cli.backbone import install, list_backbones
    from spacy_paraphrase.cli.convert import label_options
    from spacy_paraphrase.cli.quantize import quantize
    from spacy_paraphrase.cli.visualize import visualize

    corpus = tmp_path / "news.jsonl"
    corpus.write_text("{}\n", encoding="utf-8")
    refused = [
        (lambda: annotate("model", corpus, tmp_path / "out.jsonl", engine="spark"), "Unknown engine 'spark'"),
        (lambda: annotate("model", corpus, tmp_path / "out.jsonl", heap="quick"),
         "Unknown heap policy 'quick'; choose one of fast, lean"),
        (lambda: annotate("model", corpus, tmp_path / "out", engine="ray", output_format="convokit"),
         "convokit runs with the local engine only"),
        (lambda: annotate("model", corpus, tmp_path / "out.jsonl", source_options(pairing="threads")),
         "Unknown pairing mode 'threads'; choose one of consecutive, reply-to"),
        (lambda: source_options(reader_options=["text1"]), "--reader-option must look like KEY=VALUE"),
        (lambda: visualize(corpus, tmp_path / "page.html", limit=0), "--limit must be at least 1"),
        (lambda: visualize(corpus, corpus), "refusing to write over it"),
        (lambda: quantize(tmp_path / "no_model", tmp_path / "int8"), "is not a pipeline directory"),
        (lambda: install("nobody/nothing", tmp_path), "No offline build is known for 'nobody/nothing'"),
        (lambda: label_options("label", no_label=True), "--label and --no-label exclude each other"),
        (lambda: label_options(label_map="[1]"), "--label-map must be a JSON object"),
    ]
    for call, message in refused:
        with pytest.raises(CommandError, match=message):
            call()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["news.jsonl"]
    assert [row[0] for row in list_backbones(tmp_path)]  # every known backbone, with its status
