"""benchmarks.run_reload_memory: one reload each way on the tiny model, reported as the table says."""
import sys

import pytest

from benchmarks.run_reload_memory import main


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self (Linux only)")
def test_one_reload_each_way_is_measured_and_reported(tmp_path):
    out = tmp_path / "reload.md"
    assert main(["--model", "tiny", "--reloads", "1", "--zone-pairs", "8", "--output", str(out)]) == 0
    rows = [line.split(" | ") for line in out.read_text(encoding="utf-8").splitlines()
            if line.startswith("| whole") or line.startswith("| vocab")]
    assert [row[0] for row in rows] == ["| whole pipeline (_load)", "| vocab and tokenizer (_renew_vocab)"]
    whole, vocab = rows
    # a whole load makes a new pipeline, the old one already gone when it starts; a vocab
    # renewal keeps the pipeline object and measures no dropped state
    assert whole[3].endswith("(no)") and whole[-1] == "False |"
    assert vocab[3] == "-" and vocab[-1] == "True |"
    assert all(float(value) > 0 for row in rows for value in (row[2], row[4], row[5]))
