from studies.table_strings import CHECKS, NAME, SCORES, table


def _run(acc_words, acc_strings, punct):
    def scores(acc):
        return {f"{NAME}_{s}": (acc if s == "pair_acc" else 0.5) for s in SCORES}
    checks = {key: 1.0 for key, _ in CHECKS}
    checks["strings_punctuation_only_spans"] = punct
    return {"checks": checks,
            "words": {"scores": scores(acc_words), "cross_tuned": scores(acc_words)},
            "strings": {"scores": scores(acc_strings), "cross_tuned": scores(acc_strings)}}


def test_table_means_and_differences():
    text = table({"s1": _run(0.6, 0.7, 0), "s2": _run(0.8, 0.8, 2)})
    assert "| punctuation-only spans (string input) | 0 | 2 |" in text
    # words 0.6/0.8 -> 0.700 ± 0.141; differences +0.1 and 0.0 -> +0.050 ± 0.050
    assert "| as trained | words | 0.700 ± 0.141 |" in text
    assert "| cross-tuned | strings − words | +0.050 ± 0.050 |" in text
