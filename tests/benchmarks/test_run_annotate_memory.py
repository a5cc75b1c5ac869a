"""benchmarks.run_annotate_memory: the corpora it writes, the peaks it samples and the slope it fits."""
import os
import subprocess
import sys

import pytest

from benchmarks.run_annotate_memory import (FORMATS, _rss_kib, corpus_path, made_up_word, slope_after_warmup,
                                            write_corpus)
from spacy_paraphrase.dialogs import read_turn_pairs


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_holds_exactly_the_requested_pairs(tmp_path, fmt):
    for n in (1, 9, 25):
        path = write_corpus(fmt, corpus_path(tmp_path, fmt, f"c{n}"), n, seed=n)
        pairs = list(read_turn_pairs(path, fmt))
        assert len(pairs) == n
        assert all(p.first.text.strip() and p.second.text.strip() for p in pairs)


def test_made_up_words_are_distinct_so_the_vocabulary_keeps_growing():
    words = [made_up_word(i) for i in range(26 * 27 + 5)]
    assert words[:3] == ["a", "b", "c"] and words[26] == "aa" and len(set(words)) == len(words)


def test_slope_is_fitted_after_warm_up_in_kb_per_pair():
    # 100 MiB of warm-up over the first 1,000 pairs, then 1 KB per pair
    samples = [(r, 500 + 100 * r / 1000) for r in range(0, 1000, 50)]
    samples += [(r, 600 + r / 1024) for r in range(1000, 5001, 100)]
    fit = slope_after_warmup(samples, 5000, warmup=0.2)
    assert fit["kb_per_pair"] == pytest.approx(1.0)
    assert fit["from_records"] == 1000 and fit["peak_rss_mib"] == pytest.approx(600 + 5000 / 1024)
    # a saw-tooth (memory freed at each buffer's end) sampled at any phase: the peaks decide
    tooth = [(r, 600 + 50 * (k % 3) / 2 + 0.5 * r / 1024) for r in range(1000, 5001, 100) for k in range(3)]
    assert slope_after_warmup(tooth + tooth[:2], 5000, warmup=0.2)["kb_per_pair"] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="too few buffers"):
        slope_after_warmup(samples[:3], 5000, warmup=0.2)


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="Linux /proc only")
def test_a_sample_is_the_peak_since_the_last_sample():
    # a child holds 200 MiB, frees them and waits: its current RSS is small, its peak is not
    code = "import sys, time; a = b'x' * (200 << 20); del a; print('freed', flush=True); time.sleep(60)"
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    try:
        assert child.stdout.readline().strip() == b"freed"
        assert _rss_kib(child.pid) > 200 << 10  # the peak, although freed before the sample
        assert _rss_kib(child.pid) < 100 << 10  # reset: the next sample sees only what is held now
    finally:
        child.kill()
        child.wait()
