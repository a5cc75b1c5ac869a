"""The local-LLM benchmark's re-asking table (fast: from a made-up result)."""
from benchmarks.run_llm_local import reask_table


def test_reask_table_counts_before_and_after():
    result = {"n_pairs": 2, "n_samples": 3, "second_run": {"requests": 0, "cache_hit_rate": 1.0},
              "evaluate": {"samples": {"yes": 4, "no": 1, "unparsed": 1}, "unparsed_first_answer": 3,
                           "reask_requests": 5, "scores": {"paraphrase_llm_pair_p": 0.5, "paraphrase_llm_pair_r": 1.0,
                                                           "paraphrase_llm_pair_f": 0.667}}}
    table = reask_table(result)
    assert "| 3 of 6 (**50.0%**) |" in table  # first answers not parsed
    assert "**1 of 6** (16.7%)" in table  # after re-asking
    assert "5: 11 requests for 6 samples, 5.50 per pair instead of 3" in table
