"""LLM Docs -> silver training data -> spacy train: the command sequence of
docs/llm.md ("Silver labels for the fast component"), on the replay model."""
import json
import subprocess
import sys
from pathlib import Path

import numpy
import pytest
import spacy
import srsly
from spacy.tokens import DocBin

from spacy_paraphrase import make_pair_doc
from spacy_paraphrase.corpus import PairCorpus
from spacy_paraphrase.paraphrase_spans.scorer import reference_token_targets

from .helpers import GUEST, HOST, answer, require

require("spacy_llm", "the LLM task")
require("rapidfuzz", "fuzzy quote alignment")

ROOT = Path(__file__).resolve().parents[2]
RECORDS = [
    {"match": "Coming back", "texts": [answer(True, ["normal winter"], ["normal winter"])] * 2 + [answer(False)]},
    {"match": "failing pair", "error": "HTTP 500 (after 3 attempt(s))"},
    {"match": "", "texts": [answer(False)] * 3},
]


def write_pairs(path, nlp):
    docs = [make_pair_doc(nlp, GUEST, HOST), make_pair_doc(nlp, "It rained all day.", "How was the match?"),
            make_pair_doc(nlp, "This is the failing pair.", "Is it?")]
    DocBin(docs=docs).to_disk(path)


def run(*args, cwd):
    result = subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


@pytest.fixture
def llm_pipeline(tmp_path):
    srsly.write_jsonl(tmp_path / "rec.jsonl", RECORDS)
    run("-m", "spacy", "assemble", str(ROOT / "configs" / "llm_replay.cfg"), str(tmp_path / "llm"),
        "--paths.recordings", str(tmp_path / "rec.jsonl"), cwd=tmp_path)
    return tmp_path / "llm"


def main(args):
    """``llm silver ARGS``'s exit status (its output in the result)."""
    from typer.testing import CliRunner

    from spacy_paraphrase.cli import app

    main.result = CliRunner().invoke(app, ["llm", "silver", *args])
    return main.result.exit_code


def test_silver_docs_soft_and_hard(tmp_path, llm_pipeline):
    nlp = spacy.blank("en")
    write_pairs(tmp_path / "pairs.spacy", nlp)
    with pytest.warns(UserWarning, match="1 of 3 pairs"):
        assert main([str(llm_pipeline), str(tmp_path / "pairs.spacy"), str(tmp_path / "soft.spacy"), "--soft"]) == 0
    examples = list(PairCorpus(tmp_path / "soft.spacy")(nlp))
    assert len(examples) == 2  # the failed pair is left out
    ref = examples[0].reference
    assert ref.cats["PARAPHRASE"] == pytest.approx(2 / 3)
    targets = reference_token_targets(ref, "paraphrase")
    words = [t.text for t in ref]
    assert targets[words.index("normal")] == pytest.approx(2 / 3) and targets[words.index("daryn")] == 0
    assert [s.text for s in ref.spans["paraphrase"]] == ["normal winter", "normal winter"]
    assert examples[1].reference.cats["PARAPHRASE"] == 0 and len(examples[1].reference.spans["paraphrase"]) == 0
    with pytest.warns(UserWarning):
        assert main([str(llm_pipeline), str(tmp_path / "pairs.spacy"), str(tmp_path / "hard.spacy")]) == 0
    hard = list(PairCorpus(tmp_path / "hard.spacy")(nlp))
    assert hard[0].reference.cats["PARAPHRASE"] == 1.0
    assert "token_targets" not in hard[0].reference.spans["paraphrase"].attrs


def test_silver_exits_1_without_any_answer(tmp_path):
    srsly.write_jsonl(tmp_path / "rec.jsonl", [{"match": "", "error": "down"}])
    run("-m", "spacy", "assemble", str(ROOT / "configs" / "llm_replay.cfg"), str(tmp_path / "llm"),
        "--paths.recordings", str(tmp_path / "rec.jsonl"), cwd=tmp_path)
    write_pairs(tmp_path / "pairs.spacy", spacy.blank("en"))
    with pytest.warns(UserWarning):
        assert main([str(tmp_path / "llm"), str(tmp_path / "pairs.spacy"), str(tmp_path / "out.spacy")]) == 1
    assert "got an answer" in " ".join(main.result.output.split()) and not (tmp_path / "out.spacy").exists()
    assert main([str(tmp_path / "llm"), str(tmp_path / "pairs.spacy"), str(tmp_path / "pairs.spacy")]) == 1
    assert "is also an input" in " ".join(main.result.output.split())


@pytest.mark.slow
def test_worked_sequence_evaluate_silver_train(tmp_path, llm_pipeline, tiny_bert):
    nlp = spacy.blank("en")
    write_pairs(tmp_path / "pairs.spacy", nlp)
    # gold for evaluate: the first pair is a paraphrase on "normal winter"
    gold = list(DocBin().from_disk(tmp_path / "pairs.spacy").get_docs(nlp.vocab))[:2]
    for doc, is_para in zip(gold, (True, False)):
        doc.spans["paraphrase"] = [doc[i : i + 1] for i, t in enumerate(doc) if is_para and t.text in ("normal", "winter")]
        doc.cats["PARAPHRASE"] = float(is_para)
    DocBin(docs=gold).to_disk(tmp_path / "dev.spacy")
    run("-m", "spacy_paraphrase", "evaluate", str(llm_pipeline), str(tmp_path / "dev.spacy"),
        "-o", str(tmp_path / "scores.json"), cwd=tmp_path)
    scores = json.loads((tmp_path / "scores.json").read_text())
    assert scores["paraphrase_llm_pair_acc"] == 1.0 and scores["paraphrase_llm_jaccard_first"] == 1.0
    run("-m", "spacy_paraphrase", "llm", "silver", str(llm_pipeline), str(tmp_path / "pairs.spacy"),
        str(tmp_path / "silver.spacy"), "--soft", cwd=tmp_path)
    run("-m", "spacy", "train", str(ROOT / "configs" / "contextdep_minilm_cpu.cfg"), "--output", str(tmp_path / "out"),
        "--paths.train", str(tmp_path / "silver.spacy"), "--paths.dev", str(tmp_path / "dev.spacy"),
        "--components.transformer.model.name", tiny_bert, "--training.max_steps", "4",
        "--training.eval_frequency", "2", cwd=tmp_path)
    trained = spacy.load(tmp_path / "out" / "model-last")
    doc = trained(make_pair_doc(trained, GUEST, HOST))
    assert doc.spans["paraphrase"].attrs["token_probs"].shape == (len(doc),)
