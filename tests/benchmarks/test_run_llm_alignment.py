"""The alignment benchmark on ContextDeP dev (skipped without the data): the
bars of issue 38 hold on its quotes."""
import pytest

from tests.llm.helpers import require
from tests.util import DATA_DIR


@pytest.mark.slow
def test_alignment_on_contextdep_dev():
    require("rapidfuzz", "fuzzy quote alignment")
    path = DATA_DIR / "contextdep" / "dev.tsv"
    if not path.exists():
        pytest.skip("ContextDeP data not available")
    from benchmarks.run_llm_alignment import markdown, run

    result = run(path)
    kinds, summary = result["kinds"], result["summary"]
    assert kinds["wrong_turn"]["ours_wrong_turn"] == 0 and kinds["wrong_turn_echo"]["ours_wrong_turn"] == 0
    assert kinds["not_in_text"]["ours_aligned"] == 0
    assert kinds["truncated_last"]["ours_jaccard"] >= 0.99
    assert kinds["dropped_second"]["ours_jaccard"] >= 0.99
    assert summary["ours_mean_jaccard_per_span"] >= 0.97
    assert summary["ours_invented_aligned"] == 0  # quotes of other pairs: placed nowhere
    assert "short_replaced" in markdown(result)


def test_invented_quote_held_by_the_pair_is_not_counted():
    """Fast: another pair's quote that this pair holds with a filler put in or a word left out is
    this pair's own short quote (the benchmark leaves it out of the invented ones)."""
    from benchmarks.run_llm_alignment import in_text

    units = "we cut the school budget last year".split()
    assert in_text(units, ["cut", "the", "school"])
    assert in_text(units, ["cut", "really", "the", "school"])  # a filler put in
    assert in_text(units, ["the", "budget", "last"])  # "school" left out
    assert not in_text(units, ["cut", "people", "school"])  # a word replaced: invented
    assert in_text(units, ["the", "budget"])  # two units, "school" left out
    assert not in_text(units, ["really", "budget"])  # two units: no filler is taken out of them
    assert not in_text(units, ["cut", "taxes", "the", "school"])  # not a filler
