"""annotate MODEL - -: pairs piped in, JSON Lines records out on stdout only
(messages on stderr); an id column is the pair id."""
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _annotate(model, text, *args):
    return subprocess.run([sys.executable, "-m", "spacy_paraphrase", "annotate", model, "-", "-", *args],
                          input=text, capture_output=True, text=True, cwd=REPO, timeout=300)


def test_tsv_from_stdin_to_stdout(annotate_model):
    tsv = "id\ttext1\ttext2\nq1\tThe cat sat.\tA cat was sitting.\nq2\tIt rains.\tSo it rains.\n"
    result = _annotate(annotate_model, tsv)
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]  # nothing else on stdout
    assert [r["pair_id"] for r in records] == ["q1", "q2"]
    assert "Annotated" in result.stderr and "pairs written: 2" in result.stderr


def test_jsonl_from_stdin_and_a_bad_option(annotate_model):
    lines = "".join(json.dumps({"text1": a, "text2": b}) + "\n" for a, b in [("Yes.", "Yes indeed."), ("No.", "Nope.")])
    result = _annotate(annotate_model, lines, "--with-probs")
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["pair_id"] for r in records] == ["stdin:1", "stdin:2"]
    refused = _annotate(annotate_model, lines, "--engine", "ray")
    assert refused.returncode == 1 and refused.stdout == "" and "standard output" in refused.stderr
