"""The package's commands on an LLM pipeline (replay model), unchanged:
tune (with --save), annotate, visualize."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
import srsly
from spacy.tokens import DocBin

from spacy_paraphrase import make_pair_doc

from .helpers import GUEST, HOST, answer, require

require("spacy_llm", "the LLM task")
require("rapidfuzz", "fuzzy quote alignment")

ROOT = Path(__file__).resolve().parents[2]
PAIRS = [(GUEST, HOST, True), ("It rained all day.", "How was the match?", False),
         ("The flight was coming from Brazil.", "Coming from Brazil, OK.", True)]
RECORDS = [
    {"match": "Coming back", "texts": [answer(True, ["normal winter"], ["normal winter"])] * 2 + [answer(False)]},
    {"match": "Brazil", "texts": [answer(True, ["coming from Brazil"], ["Coming from Brazil"])] + [answer(False)] * 2},
    {"match": "", "texts": [answer(False)] * 3},
]


def run(*args, cwd):
    result = subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("llm_cli")
    srsly.write_jsonl(tmp / "rec.jsonl", RECORDS)
    run("-m", "spacy", "assemble", str(ROOT / "configs" / "llm_replay.cfg"), str(tmp / "llm"),
        "--paths.recordings", str(tmp / "rec.jsonl"), cwd=tmp)
    nlp = spacy.blank("en")
    gold = []
    for a, b, is_para in PAIRS:
        doc = make_pair_doc(nlp, a, b)
        doc.spans["paraphrase"] = []
        doc.cats["PARAPHRASE"] = float(is_para)
        gold.append(doc)
    DocBin(docs=gold).to_disk(tmp / "dev.spacy")
    srsly.write_jsonl(tmp / "pairs.jsonl", [{"id": f"p{i}", "text1": a, "text2": b} for i, (a, b, _) in enumerate(PAIRS)])
    return tmp


def test_tune_tunes_on_the_votes_and_saves(setup):
    out = run("-m", "spacy_paraphrase", "tune", str(setup / "llm"), str(setup / "dev.spacy"),
              "--key", "threshold", "--start", "0.2", "--end", "0.8", "--n-trials", "7",
              "-o", str(setup / "sweep.json"), "--save-to", str(setup / "tuned"), cwd=setup)
    sweep = json.loads((setup / "sweep.json").read_text())
    by_value = {round(r["value"], 2): r["paraphrase_llm_pair_acc"] for r in sweep["sweep"]}
    # votes: 2/3, 0, 1/3; gold: yes, no, yes -> every threshold in (0, 1/3] gets all three right
    assert by_value[0.2] == 1.0 and by_value[0.3] == 1.0 and by_value[0.4] == pytest.approx(2 / 3)
    assert by_value[0.7] == pytest.approx(1 / 3)
    tuned = spacy.load(setup / "tuned")
    assert tuned.get_pipe("paraphrase_llm").cfg["threshold"] == pytest.approx(sweep["best"])
    assert "Best threshold" in out


def test_annotate_writes_a_record_per_pair(setup):
    run("-m", "spacy_paraphrase", "annotate", str(setup / "llm"), str(setup / "pairs.jsonl"),
        str(setup / "records.jsonl"), "--format", "pairs", "--reader-option", "id_column=id", "--no-count", cwd=setup)
    records = list(srsly.read_jsonl(setup / "records.jsonl"))
    assert [r["pair_id"] for r in records] == ["p0", "p1", "p2"]
    assert records[0]["score"] == pytest.approx(2 / 3) and records[0]["is_paraphrase"] is True
    assert records[1]["score"] == 0 and records[1]["is_paraphrase"] is False
    assert records[0]["vote_share"] == pytest.approx(2 / 3)
    texts = sorted(s.get("text", "") for s in records[0]["spans"])
    assert texts == ["normal winter", "normal winter"]


def test_visualize_renders_llm_docs(setup):
    import spacy_paraphrase

    nlp = spacy.load(setup / "llm")
    docs = [nlp(make_pair_doc(nlp, a, b)) for a, b, _ in PAIRS]
    html = spacy_paraphrase.render(docs)
    assert ">winter<" in html and ">rained<" in html
    assert 'title="p = 0.67"' in html  # "normal winter": quoted by 2 of 3 samples


def test_annotate_stops_at_a_failed_request_and_the_same_command_resumes(tmp_path):
    """A pair whose LLM request still fails after its retries is no record (never a silent "no"): the run
    stops with one line naming the pair, the pairs before it are saved, and the same command resumes."""
    from spacy_paraphrase.annotate.annotator import PairFailed
    from spacy_paraphrase.annotate.local import run_local
    from spacy_paraphrase.dialogs import SourceOptions

    recordings = tmp_path / "rec.jsonl"
    failing = [RECORDS[0], {"match": "Brazil", "error": "HTTP 503 after 3 tries"}, RECORDS[2]]
    srsly.write_jsonl(recordings, failing)
    run("-m", "spacy", "assemble", str(ROOT / "configs" / "llm_replay.cfg"), str(tmp_path / "llm"),
        "--paths.recordings", str(recordings), cwd=tmp_path)
    pairs = tmp_path / "pairs.jsonl"
    order = [PAIRS[0], PAIRS[2], PAIRS[1]]  # the failing pair second
    srsly.write_jsonl(pairs, [{"id": f"p{i}", "text1": a, "text2": b} for i, (a, b, _) in enumerate(order)])
    out = tmp_path / "records.jsonl"
    kwargs = dict(source=SourceOptions(fmt="pairs", reader_options={"id_column": "id"}), batch_size=1,
                  buffer_batches=1, count=False, progress_bar=False)
    with pytest.raises(PairFailed, match="'p1'.*HTTP 503.*run the same command again"):
        run_local(str(tmp_path / "llm"), pairs, out, **kwargs)
    assert [r["pair_id"] for r in srsly.read_jsonl(out)] == ["p0"]  # saved; no record for p1
    proc = subprocess.run([sys.executable, "-m", "spacy_paraphrase", "annotate", str(tmp_path / "llm"), str(pairs),
                           str(out), "--format", "pairs", "--reader-option", "id_column=id", "--batch-size", "1",
                           "--no-count"], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr + proc.stdout
    assert "'p1'" in proc.stdout + proc.stderr
    srsly.write_jsonl(recordings, RECORDS)  # the server answers again
    summary = run_local(str(tmp_path / "llm"), pairs, out, **kwargs)
    records = list(srsly.read_jsonl(out))
    assert [r["pair_id"] for r in records] == ["p0", "p1", "p2"] and summary.resumed_at == 1
    assert records[1]["score"] == pytest.approx(1 / 3)


@pytest.mark.slow  # a local Ray cluster (about a minute)
def test_the_ray_engine_stops_at_a_failed_request_with_one_message(tmp_path):
    pytest.importorskip("ray")
    from spacy_paraphrase.annotate.annotator import PairFailed
    from spacy_paraphrase.annotate.ray_engine import run_ray
    from spacy_paraphrase.dialogs import SourceOptions

    recordings = tmp_path / "rec.jsonl"
    srsly.write_jsonl(recordings, [RECORDS[0], {"match": "Brazil", "error": "HTTP 503 after 3 tries"}, RECORDS[2]])
    run("-m", "spacy", "assemble", str(ROOT / "configs" / "llm_replay.cfg"), str(tmp_path / "llm"),
        "--paths.recordings", str(recordings), cwd=tmp_path)
    pairs = tmp_path / "pairs.jsonl"
    srsly.write_jsonl(pairs, [{"id": f"p{i}", "text1": a, "text2": b} for i, (a, b, _) in enumerate(PAIRS)])
    with pytest.raises(PairFailed, match=r"'p2'.*HTTP 503.*--overwrite") as info:
        run_ray(str(tmp_path / "llm"), pairs, tmp_path / "out",
                source=SourceOptions(fmt="pairs", reader_options={"id_column": "id"}), concurrency=1, num_cpus=1, progress_bar=False)
    assert "Traceback" not in str(info.value) and len(str(info.value)) < 400
