"""annotate's memory stays flat over a long run (docs/annotate.md, "Memory over
a long run"): the resident memory of a whole run, sampled as it goes, grows by
at most TARGET_KB_PER_PAIR per pair after warm-up (benchmarks.run_annotate_memory,
which measures the same on 50,000 pairs). Slow: a few minutes of CPU."""
import importlib.util

import pytest

from benchmarks.run_annotate_memory import TARGET_KB_PER_PAIR, measure
from tests.util import skip_optional

# Short, yet long enough that the vocab growth this guards against (several
# KB per pair of new words without memory zones) stands far above the noise
# of RSS sampling (a few MiB).
PAIRS = 12_000


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["local", "actor"])
def test_rss_slope_after_warm_up_stays_under_the_bound(annotate_model, tmp_path, engine):
    if engine == "actor" and importlib.util.find_spec("ray") is None:
        skip_optional("ray is not installed (pip install 'spacy-paraphrase[ray]'): the actor engine")
    run = measure(annotate_model, "chat", engine, PAIRS, tmp_path, interval=0.25, warmup=0.25)
    assert run["records"] == PAIRS
    assert run["kb_per_pair"] <= TARGET_KB_PER_PAIR, (
        f"{engine}: RSS grew {run['kb_per_pair']:.2f} KB per pair after warm-up "
        f"({run['rss_mib_at_start']:.0f} -> {run['rss_mib_at_end']:.0f} MiB over "
        f"{run['from_records']:,}-{run['to_records']:,} records)")
