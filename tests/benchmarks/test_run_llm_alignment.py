"""The alignment benchmark on ContextDeP dev (skipped without the data): the
bars of issues 38 and 50 hold on its quotes."""
import pytest

from tests.llm.helpers import require
from tests.util import DATA_DIR


@pytest.mark.slow
@pytest.mark.parametrize("evidence", ["lenient", "strict"])
def test_alignment_on_contextdep_dev(evidence):
    require("rapidfuzz", "fuzzy quote alignment")
    path = DATA_DIR / "contextdep" / "dev.tsv"
    if not path.exists():
        pytest.skip("ContextDeP data not available")
    from benchmarks.run_llm_alignment import bars, markdown, run

    log = []
    result = run(path, short_evidence=evidence, log=log)
    kinds, summary = result["kinds"], result["summary"]
    # the log says of each replaced quote with a unique place whether its kept words hold a rare one (to study misses)
    for kind in ("short_replaced", "part_replaced"):
        rows = [row for row in log if row["kind"] == kind and row.get("evidence")]
        assert sum(row["evidence"] == "rare" for row in rows) == kinds[kind]["n_rare"]
        assert sum(row["evidence"] == "rare" and row["jaccard"] > 0 for row in rows) == kinds[kind]["found_rare"]
    assert kinds["wrong_turn"]["ours_wrong_turn"] == 0 and kinds["wrong_turn_echo"]["ours_wrong_turn"] == 0
    assert kinds["not_in_text"]["ours_aligned"] == 0
    assert kinds["truncated_last"]["ours_jaccard"] >= 0.99
    # issue 50: the last word cut to every prefix, one letter included: never below the authors' rule
    for kind in ("truncated_last", "truncated_every"):
        assert kinds[kind]["below_authors"] == 0 and kinds[kind]["ours_perfect"] >= kinds[kind]["authors_perfect"]
    assert kinds["truncated_every"]["ours_jaccard"] >= 0.99
    assert kinds["inner_filler"]["ours_found_unique"] >= 0.95 and kinds["inner_filler_4"]["ours_found_unique"] >= 0.95
    assert kinds["dropped_second"]["ours_jaccard"] >= 0.99
    assert summary["ours_mean_jaccard_per_span"] >= 0.97
    # short quotes with a word added, where the intended place is the unique match in the pair
    assert kinds["short_added"]["ours_found_unique"] >= 0.85
    assert kinds["short_added"]["n_unique"] < kinds["short_added"]["n"]  # ambiguous ones exist, and are counted
    assert summary["ours_mean_jaccard_per_span_unique"] >= summary["ours_mean_jaccard_per_span"]
    assert "short_replaced" in markdown(result) and "Unique place" in markdown(result)
    assert f"| {evidence} |" in bars([result])
    # no quote of another pair is placed, with either setting; the price (docs/llm.md, "Alignment: measured"):
    # 2-word quotes with one word replaced whose only other word is rare ("convince big" for "convince them")
    # are no longer placed either: found at 19 of 25 unique places on dev, where 22 were when a lone rare word
    # was evidence enough (it also placed "she ran." at "we ran")
    assert summary["ours_invented_aligned"] == 0
    assert kinds["not_in_text"]["ours_aligned"] == 0 and kinds["not_in_text_short"]["ours_aligned"] == 0
    assert kinds["short_replaced"]["ours_found_unique"] >= 0.75


def test_issue_50_kinds():
    """Fast: the last word cut to every proper prefix, a filler at each inner place, runs of other pairs of
    the same program."""
    import random

    from benchmarks.run_llm_alignment import cut_every, inner_fillers, program_runs

    assert [q for _, q in cut_every("come in the mail.".split())] == ["come in the m", "come in the ma", "come in the mai"]
    assert cut_every(["mail"]) == [] and cut_every(["in", "a"]) == []
    quotes = inner_fillers("Rudy Giuliani said".split(), random.Random(0))
    assert [k for k, _ in quotes] == ["inner_filler"] * 2
    assert all(q.split()[0] == "Rudy" and q.split()[-1] == "said" and len(q.split()) == 4 for _, q in quotes)
    assert {k for k, _ in inner_fillers("sell a free ticket".split(), random.Random(0))} == {"inner_filler_4"}
    assert inner_fillers("one two three four five".split(), random.Random(0)) == []
    pairs = [{"qid": "CNN-1-2", "words": (["a", "b"], ["c", "d"])}, {"qid": "NPR-3-4", "words": (["x", "y"], ["z", "w"])},
             {"qid": "CNN-5-6", "words": (["who", "signed", "the"], ["who", "signed", "the"])}]
    runs = program_runs(pairs[0], pairs, random.Random(0), n=4)
    assert len(runs) == 8 and all(q.split()[0] in ("who", "signed") or len(q.split()) == 2 for _, q in runs)
    assert not any(w in q.split() for _, q in runs for w in ("x", "y", "z", "w", "a", "b", "c", "d"))


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


def test_unique_place_of_a_changed_quote():
    """Fast: a made quote's intended place is unique when no other run of the pair fits the quote as
    well (as few unit edits, then as many of its units kept); the bars are read on those."""
    import spacy

    from benchmarks.run_llm_alignment import unique_fit, unique_place
    from spacy_paraphrase import make_pair_doc

    doc = make_pair_doc(spacy.blank("en"), "if we go , the small business wins".split(),
                        "if they stay , small businesses lose".split())
    # "if way" for "if we" (tokens 0-2): the host's "if they" fits it as well
    assert not unique_place(doc, "if way", (0, 2))
    # "the small way" for "the small business": no other "the small X" / "X small way"
    assert unique_place(doc, "the small way", (4, 7))
    # a cut-off last word that fits "small business" and "small businesses"
    assert not unique_place(doc, "small busi", (5, 7))
    # "if go" for "if we go": "if they" is one edit from it too, but keeps one of its units, not two
    assert unique_place(doc, "if go", (0, 3))
    # a quote that keeps nothing of its place is no quote of it
    assert not unique_place(doc, "big time", (0, 2))
    # a quote of another pair: one best one-edit place here ("they stay"), or two ("if we", "if they")
    assert unique_fit(doc, "they left") is not None
    assert unique_fit(doc, "if so") is None
