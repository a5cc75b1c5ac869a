"""A component's pipe over length-sorted batches (spacy_paraphrase/pipe_by_length.py):
Docs come out in stream order, a failing batch goes to the error handler, and
the next batch is planned in a worker thread when a core is free."""
import numpy
import pytest
from thinc.api import fix_random_seed

import spacy_paraphrase.pipe_by_length as sorted_pipe
from spacy_paraphrase import token_probs

from tests.util import make_examples, make_nlp, pairs_of_mixed_lengths as _pairs


def test_component_pipe_sorts_by_length_and_keeps_stream_order(tiny_bert, monkeypatch):
    # SORT_BATCHES batches are run sorted by length: the batches the model
    # sees are of similar length, the Docs come out in stream order, and each
    # Doc gets what it gets on its own (up to float rounding across batch shapes).
    fix_random_seed(0)
    nlp = make_nlp(tiny_bert, inline=True)
    nlp.initialize(lambda: make_examples(nlp))
    docs = _pairs(nlp) * 3
    pipe = nlp.get_pipe("paraphrase_spans")
    seen = []
    original = pipe.predict

    def spy(batch):
        seen.append([len(d) for d in batch])
        return original(batch)

    monkeypatch.setattr(pipe, "predict", spy)
    out = list(nlp.pipe([d.copy() for d in docs], batch_size=4))
    assert [d.text for d in out] == [d.text for d in docs]
    lengths = [n for batch in seen for n in batch]
    assert lengths == sorted(lengths) and len(lengths) == len(docs)
    for doc, alone in zip(out, docs):
        single = list(nlp.pipe([alone.copy()], batch_size=1))[0]
        numpy.testing.assert_allclose(token_probs(doc, "paraphrase"), token_probs(single, "paraphrase"), atol=1e-5)


def test_component_pipe_hands_a_failing_batch_to_the_error_handler(tiny_bert, monkeypatch):
    fix_random_seed(0)
    nlp = make_nlp(tiny_bert, inline=True)
    nlp.initialize(lambda: make_examples(nlp))
    docs = _pairs(nlp)
    bad = docs[1]
    pipe = nlp.get_pipe("paraphrase_spans")
    original = pipe.predict

    def fail_on_bad(batch):
        if any(d is bad for d in batch):
            raise ValueError("boom")
        return original(batch)

    monkeypatch.setattr(pipe, "predict", fail_on_bad)
    with pytest.raises(ValueError, match="boom"):
        list(pipe.pipe(list(docs), batch_size=1))
    handled = []
    pipe.set_error_handler(lambda name, proc, batch, err: handled.append([d is bad for d in batch]))
    out = list(pipe.pipe(list(docs), batch_size=1))
    assert handled == [[True]]
    assert [d for d in out] == [d for d in docs if d is not bad]


def test_the_next_batch_is_planned_in_a_worker_when_a_core_is_free(tiny_bert, monkeypatch):
    import threading

    from spacy_paraphrase.encoder import model as model_module

    fix_random_seed(0)
    nlp = make_nlp(tiny_bert, inline=True)
    nlp.initialize(lambda: make_examples(nlp))
    docs = _pairs(nlp) * 2
    threads = []
    original = model_module.encode_pairs

    def spy(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return original(*args, **kwargs)

    monkeypatch.setattr(model_module, "encode_pairs", spy)
    monkeypatch.setattr(sorted_pipe, "spare_core", lambda: True)
    planned = [token_probs(d, "paraphrase") for d in nlp.pipe([d.copy() for d in docs], batch_size=2)]
    assert threads and all(name.startswith("spacy-paraphrase-plan") for name in threads)
    trf = nlp.get_pipe("paraphrase_spans").model.get_ref("tok2vec").layers[0]
    assert trf.planned == {}
    threads.clear()
    monkeypatch.setattr(sorted_pipe, "spare_core", lambda: False)
    inline = [token_probs(d, "paraphrase") for d in nlp.pipe([d.copy() for d in docs], batch_size=2)]
    assert threads and not any(name.startswith("spacy-paraphrase-plan") for name in threads)
    for x, y in zip(planned, inline):
        numpy.testing.assert_array_equal(x, y)
