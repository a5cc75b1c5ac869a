"""Round trips: DocBin, Doc bytes, pickling for nlp.pipe(n_process=2), and
training twice with the same seed."""
import pickle
import subprocess
import sys
import textwrap

import numpy
import pytest
import spacy
from spacy.tokens import Doc, DocBin
from thinc.api import Adam, fix_random_seed

from spacy_paraphrase import make_pair_doc, token_probs
from spacy_paraphrase.converters import convert_contextdep

from tests.util import HEADER, row
from tests.util import make_examples, make_nlp


def _same_pair_doc(a: Doc, b: Doc, key="paraphrase"):
    assert [t.text for t in a] == [t.text for t in b]
    assert a.text == b.text
    assert [(s.start, s.end, s.label_) for s in a.spans["turns"]] == [(s.start, s.end, s.label_) for s in b.spans["turns"]]
    assert dict(a.spans["turns"].attrs) == dict(b.spans["turns"].attrs)
    assert a.cats == b.cats
    if key in a.spans:
        ga, gb = a.spans[key], b.spans[key]
        assert [(s.start, s.end, s.label_) for s in ga] == [(s.start, s.end, s.label_) for s in gb]
        assert set(ga.attrs) == set(gb.attrs)
        for k in ga.attrs:
            va, vb = ga.attrs[k], gb.attrs[k]
            if isinstance(va, (list, numpy.ndarray)):
                numpy.testing.assert_array_equal(numpy.asarray(va), numpy.asarray(vb))
            else:
                assert va == vb, k


def test_docbin_keeps_gold_votes_and_shares(tmp_path, nlp):
    path = tmp_path / "x.tsv"
    path.write_text(
        HEADER
        + row("Q1", "A", 1, "my  20th time", [1, 0, 1, 1], "doing this", [1, 1])
        + row("Q1", "B", 0, "my  20th time", [0, 0, 0, 0], "doing this", [0, 0]),
        encoding="utf-8",
    )
    for mode in ("majority", "all", "soft"):
        docs, _ = convert_contextdep(path, nlp.vocab, mode=mode)
        data = DocBin(docs=docs, store_user_data=True).to_bytes()
        back = list(DocBin().from_bytes(data).get_docs(spacy.blank("en").vocab))
        for a, b in zip(docs, back):
            _same_pair_doc(a, b)
            assert b.spans["paraphrase"].attrs["votes"] == [1, 2]


def test_predicted_docs_survive_docbin_bytes_and_pickle(trained_pipeline):
    nlp, examples = trained_pipeline
    docs = list(nlp.pipe([eg.predicted.copy() for eg in examples]))
    back = list(DocBin().from_bytes(DocBin(docs=docs).to_bytes()).get_docs(nlp.vocab))
    for a, b in zip(docs, back):
        _same_pair_doc(a, b)
    for a in docs:
        _same_pair_doc(a, Doc(nlp.vocab).from_bytes(a.to_bytes()))
        _same_pair_doc(a, pickle.loads(pickle.dumps(a)))


def test_nlp_to_bytes_roundtrip_same_outputs(trained_pipeline):
    nlp, examples = trained_pipeline
    nlp2 = spacy.util.load_model_from_config(nlp.config)
    nlp2.from_bytes(nlp.to_bytes())
    for eg in examples:
        a = nlp(eg.predicted.copy())
        b = nlp2(eg.predicted.copy())
        numpy.testing.assert_allclose(token_probs(a), token_probs(b), rtol=1e-5, atol=1e-6)


def test_pipe_n_process_2_same_outputs(trained_pipeline, tmp_path):
    """torch under fork can hang: the worker uses one torch thread; the
    subprocess timeout makes a hang a failure, not a stuck suite."""
    nlp, examples = trained_pipeline
    nlp.to_disk(tmp_path / "model")
    docs = [eg.predicted.copy() for eg in examples] * 3
    DocBin(docs=docs).to_disk(tmp_path / "in.spacy")
    single = list(nlp.pipe([d.copy() for d in docs]))
    DocBin(docs=single).to_disk(tmp_path / "single.spacy")
    code = textwrap.dedent(
        f"""
        import spacy, numpy
        from spacy.tokens import DocBin
        from spacy_paraphrase import token_probs
        nlp = spacy.load({str(tmp_path / 'model')!r})
        docs = list(DocBin().from_disk({str(tmp_path / 'in.spacy')!r}).get_docs(nlp.vocab))
        ref = list(DocBin().from_disk({str(tmp_path / 'single.spacy')!r}).get_docs(nlp.vocab))
        out = list(nlp.pipe(docs, n_process=2, batch_size=2))
        assert len(out) == len(ref)
        for a, b in zip(out, ref):
            numpy.testing.assert_allclose(token_probs(a), token_probs(b), rtol=1e-4, atol=1e-5)
            assert [(s.start, s.end) for s in a.spans["turns"]] == [(s.start, s.end) for s in b.spans["turns"]]
        print("OK")
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("OK")


def test_training_twice_with_same_seed_is_identical(tiny_bert):
    def run():
        fix_random_seed(1)
        nlp = make_nlp(tiny_bert)
        examples = make_examples(nlp)
        nlp.initialize(lambda: examples)
        opt = Adam(1e-3)
        losses = [nlp.update(examples, sgd=opt, drop=0.1)["paraphrase_spans"] for _ in range(5)]
        return losses, nlp.evaluate(examples)

    l1, s1 = run()
    l2, s2 = run()
    assert l1 == l2
    s1 = {k: v for k, v in s1.items() if k != "speed"}
    s2 = {k: v for k, v in s2.items() if k != "speed"}
    assert s1 == s2
