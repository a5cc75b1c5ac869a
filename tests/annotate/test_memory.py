"""What annotate keeps per pair (docs/annotate.md, "Memory over a long run"):
each zone of pairs frees the words it added to the vocab, and the vocab and the
tokenizer are loaded again every ``reload_pairs`` pairs with the same records. Resident
memory over a long run: benchmarks.run_annotate_memory (and the slow test
below)."""
import gc
import os
import sys
import weakref

import pytest

from benchmarks.run_annotate_memory import TARGET_KB_PER_PAIR, build_model, measure
from spacy_paraphrase.annotate import PairAnnotator, heap
from spacy_paraphrase.dialogs.turns import Turn, TurnPair, Utterance


def pairs(words, n=6):
    out = []
    for k in range(n):
        first = Utterance(f"u{k}a", "c", "ANN", f"{words[k % len(words)]} came back {k}")
        second = Utterance(f"u{k}b", "c", "BOB", f"so {words[(k + 1) % len(words)]} is here")
        out.append(TurnPair(f"u{k}a", "c", Turn.of([first]), Turn.of([second])))
    return out


def test_a_zone_frees_the_words_it_added_and_the_records_stay_the_same(annotate_model):
    annotator = PairAnnotator(annotate_model, batch_size=2, with_probs=True, reload_pairs=0)
    strings = annotator.nlp.vocab.strings
    annotator.annotate(pairs(["warmword"]))  # the first call warms the caches: its words stay
    assert "warmword" in strings
    new = pairs(["zebraquux", "plonkfrob"])
    records = annotator.annotate(new)
    assert "zebraquux" not in strings and "plonkfrob" not in strings
    fresh = PairAnnotator(annotate_model, batch_size=2, with_probs=True, reload_pairs=0)
    assert fresh.annotate(new) == records  # the same records inside a zone as outside one


def test_the_vocab_is_loaded_again_after_reload_pairs_with_the_same_records(annotate_model):
    annotator = PairAnnotator(annotate_model, batch_size=2, reload_pairs=4)
    steady = PairAnnotator(annotate_model, batch_size=2, reload_pairs=0)
    nlp, old_ids = annotator.nlp, (id(annotator.nlp.vocab), id(annotator.nlp.tokenizer))
    # a Vocab takes no weak reference (and a strong one would keep it): its Lookups, which only it holds, does
    old_vocab_lookups = weakref.ref(nlp.vocab.lookups)
    weights = [pipe.model for _, pipe in nlp.pipeline]
    batches = [pairs([f"w{k}", "v"], n=3) for k in range(4)]
    got = [annotator.annotate(batch) for batch in batches]
    assert (id(annotator.nlp.vocab), id(annotator.nlp.tokenizer)) != old_ids  # 3 + 3 pairs > 4: loaded again
    assert all(pipe.vocab is annotator.nlp.vocab for _, pipe in annotator.nlp.pipeline)
    # the weights are not loaded again (a full load costs a few times their size for a moment) ...
    assert annotator.nlp is nlp and [pipe.model for _, pipe in nlp.pipeline] == weights
    # ... and nothing holds the old vocab (its hash tables are freed)
    gc.collect()
    assert old_vocab_lookups() is None
    assert got == [steady.annotate(batch) for batch in batches]


def test_a_component_that_keeps_the_old_vocab_gets_the_whole_pipeline_loaded_again(annotate_model):
    annotator = PairAnnotator(annotate_model, batch_size=2, reload_pairs=4)
    steady = PairAnnotator(annotate_model, batch_size=2, reload_pairs=0)
    annotator.nlp.get_pipe("paraphrase_spans").kept_vocab = annotator.nlp.vocab  # a name the renewal does not know
    first_nlp = weakref.ref(annotator.nlp)
    batches = [pairs([f"w{k}", "v"], n=3) for k in range(3)]
    got = [annotator.annotate(batch) for batch in batches]
    assert annotator.nlp is not first_nlp()  # the old vocab would have stayed: loaded whole instead ...
    gc.collect()
    assert first_nlp() is None  # ... and the old pipeline is gone, not kept beside the new one
    assert got == [steady.annotate(batch) for batch in batches]


def test_the_annotator_bounds_native_memory_for_itself_and_its_workers(annotate_model, monkeypatch):
    monkeypatch.delenv(heap.ONEDNN_CACHE_ENV, raising=False)
    monkeypatch.setenv(heap.MMAP_THRESHOLD_ENV, "262144")  # a value given by the user is kept
    PairAnnotator(annotate_model, batch_size=2)
    assert os.environ[heap.ONEDNN_CACHE_ENV] == str(heap.ONEDNN_CACHE_CAPACITY)
    assert os.environ[heap.MMAP_THRESHOLD_ENV] == "262144"
    if sys.platform.startswith("linux"):
        assert heap.bound_native_memory()  # glibc's mallopt took the value


def test_heap_policies_set_their_own_values_and_keep_the_users(monkeypatch):
    for name in (heap.MMAP_THRESHOLD_ENV, heap.TRIM_THRESHOLD_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(heap, "_SET_HERE", {})
    heap.bound_native_memory("fast")
    assert os.environ[heap.MMAP_THRESHOLD_ENV] == str(32 * 2 ** 20)
    assert os.environ[heap.TRIM_THRESHOLD_ENV] == str(64 * 2 ** 20)
    heap.bound_native_memory("lean")  # a later run of this process with another policy: its own value
    assert os.environ[heap.MMAP_THRESHOLD_ENV] == str(128 * 2 ** 10)
    monkeypatch.setenv(heap.MMAP_THRESHOLD_ENV, "262144")  # the user's own value is kept by both
    heap.bound_native_memory("fast")
    assert os.environ[heap.MMAP_THRESHOLD_ENV] == "262144"
    with pytest.raises(ValueError, match="heap policy 'quick'"):
        heap.bound_native_memory("quick")


def test_a_heap_policy_for_one_step_is_given_back(monkeypatch):
    for name in (heap.MMAP_THRESHOLD_ENV, heap.TRIM_THRESHOLD_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(heap, "_SET_HERE", {})
    monkeypatch.setattr(heap, "_policy", None)
    with heap.heap_policy("lean"):
        assert heap.policy_in_force() == "lean"
        assert os.environ[heap.TRIM_THRESHOLD_ENV] == str(128 * 2 ** 10)
    assert heap.policy_in_force() == "fast"  # none was set: the default (glibc's own cannot come back)
    assert os.environ[heap.MMAP_THRESHOLD_ENV] == str(32 * 2 ** 20)
    heap.bound_native_memory("lean")
    with pytest.raises(RuntimeError):
        with heap.heap_policy("fast"):
            assert os.environ[heap.TRIM_THRESHOLD_ENV] == str(64 * 2 ** 20)
            raise RuntimeError("the step failed")
    assert heap.policy_in_force() == "lean"  # given back on failure too
    assert os.environ[heap.TRIM_THRESHOLD_ENV] == str(128 * 2 ** 10)


def test_run_local_refuses_an_unknown_heap_policy_before_writing(annotate_model, tmp_path):
    from spacy_paraphrase.annotate.local import run_local

    corpus = tmp_path / "chat.jsonl"
    corpus.write_text('{"id": "c", "messages": [{"role": "user", "content": "a b"}, '
                      '{"role": "assistant", "content": "c d"}]}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="heap policy"):
        run_local(annotate_model, corpus, tmp_path / "out.jsonl", heap="quick", progress_bar=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chat.jsonl"]


# The shortest tiny run whose slope still shows the native growth that
# heap.bound_native_memory stops (about 2 KB per pair without it, measured in
# docs/annotate.md, "Memory over a long run"): 12,000 pairs, two pipeline loads.
SLOW_RUN_PAIRS = 12_000


@pytest.mark.slow
def test_resident_memory_stays_flat_over_a_long_run(tmp_path):
    """The benchmark's tiny run (benchmarks.run_annotate_memory: the whole
    annotate command over a chat corpus of new words, each buffer's peak RSS)
    grows by at most the target after warm-up."""
    model = build_model("tiny", tmp_path / "model")
    run = measure(model, "chat", "local", SLOW_RUN_PAIRS, tmp_path, interval=0.25)
    assert run["kb_per_pair"] <= TARGET_KB_PER_PAIR, (
        f"{run['kb_per_pair']:.2f} KB per pair after warm-up "
        f"({run['rss_mib_at_start']:.0f} -> {run['rss_mib_at_end']:.0f} MiB)"
    )
