import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from spacy_paraphrase.annotate.local import run_local
from tests.annotate.helpers import load_progress
from spacy_paraphrase.dialogs import SourceOptions
from tests.annotate.helpers import assert_same_records, read_jsonl, write_mediasum

MEDIASUM = SourceOptions(fmt="mediasum")  # the broken first line hides the format
ROOT = Path(__file__).resolve().parents[2]


def test_killed_run_resumes_to_the_uninterrupted_result(annotate_model, tmp_path):
    corpus = write_mediasum(tmp_path / "news.jsonl", n_copies=25, first_lines=["{broken"], extra_lines=["[]"])
    out = tmp_path / "out.jsonl"
    command = [sys.executable, "-m", "spacy_paraphrase", "annotate", annotate_model, str(corpus), str(out),
               "--batch-size", "4", "--no-count", "--format", "mediasum"]
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 300
        while time.time() < deadline and process.poll() is None:
            progress = load_progress(out) if out.with_name(out.name + ".checkpoint.json").exists() else None
            if progress is not None and progress.consumed >= 64:
                break
            time.sleep(0.05)
        assert process.poll() is None, process.stderr.read().decode()[-2000:]
        process.send_signal(signal.SIGKILL)
        process.wait(30)
    finally:
        if process.poll() is None:
            process.kill()
        process.stderr.close()
    stopped = load_progress(out)
    assert not stopped.done and 64 <= stopped.consumed < 175
    summary = run_local(annotate_model, corpus, out, progress_bar=False, batch_size=4, source=MEDIASUM)
    assert summary.resumed_at == stopped.consumed
    reference = tmp_path / "reference.jsonl"
    run_local(annotate_model, corpus, reference, progress_bar=False, batch_size=4, source=MEDIASUM)
    assert_same_records(read_jsonl(out), read_jsonl(reference))
    assert read_jsonl(str(out) + ".errors.jsonl") == read_jsonl(str(reference) + ".errors.jsonl")
    assert (summary.written, summary.skipped, summary.malformed) == (150, 25, 2)
