"""What annotate keeps per pair (docs/annotate.md, "Memory over a long run"):
each zone of pairs frees the words it added to the vocab, and the pipeline is
loaded again every ``reload_pairs`` pairs with the same records. Resident
memory over a long run: benchmarks.run_annotate_memory."""
from spacy_paraphrase.annotate import PairAnnotator
from spacy_paraphrase.annotate.record_format import pair_row
from spacy_paraphrase.dialogs.turns import Turn, TurnPair, Utterance


def rows(words, n=6):
    out = []
    for k in range(n):
        first = Utterance(f"u{k}a", "c", "ANN", f"{words[k % len(words)]} came back {k}")
        second = Utterance(f"u{k}b", "c", "BOB", f"so {words[(k + 1) % len(words)]} is here")
        out.append(pair_row(TurnPair(f"u{k}a", "c", Turn.of([first]), Turn.of([second]))))
    return out


def test_a_zone_frees_the_words_it_added_and_the_records_stay_the_same(annotate_model):
    annotator = PairAnnotator(annotate_model, batch_size=2, with_probs=True, reload_pairs=0)
    strings = annotator.nlp.vocab.strings
    annotator.annotate(rows(["warmword"]))  # the first call warms the caches: its words stay
    assert "warmword" in strings
    new = rows(["zebraquux", "plonkfrob"])
    records = annotator.annotate(new)
    assert "zebraquux" not in strings and "plonkfrob" not in strings
    fresh = PairAnnotator(annotate_model, batch_size=2, with_probs=True, reload_pairs=0)
    assert fresh.annotate(new) == records  # the same records inside a zone as outside one


def test_the_pipeline_is_loaded_again_after_reload_pairs_with_the_same_records(annotate_model):
    annotator = PairAnnotator(annotate_model, batch_size=2, reload_pairs=4)
    steady = PairAnnotator(annotate_model, batch_size=2, reload_pairs=0)
    first_nlp = annotator.nlp
    batches = [rows([f"w{k}", "v"], n=3) for k in range(4)]
    got = [annotator.annotate(batch) for batch in batches]
    assert annotator.nlp is not first_nlp  # 3 + 3 pairs > 4: loaded again
    assert got == [steady.annotate(batch) for batch in batches]
