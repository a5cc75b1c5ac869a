"""The pair transformer's torch layer runs on PairHFShim (encoder/shim.py):
built by the registered architectures, predict without train/eval toggles,
the optimizer's averages reach the torch weights, and pipelines still
pickle, copy and serialize."""
import pickle
import subprocess
import sys
import textwrap

import numpy
import pytest
import spacy
from spacy.tokens import DocBin
from spacy_transformers.layers.hf_shim import HFShim
from thinc.api import Adam, fix_random_seed

from spacy_paraphrase import token_probs
from spacy_paraphrase.encoder.shim import PairHFShim

from tests.util import make_examples, make_nlp


def _transformer(nlp):
    if "transformer" in nlp.pipe_names:
        return nlp.get_pipe("transformer").model
    return nlp.get_pipe("paraphrase_spans").model.get_ref("tok2vec").get_ref("transformer")


def _shim(nlp):
    shims = _transformer(nlp).layers[0].shims
    assert len(shims) == 1
    return shims[0]


def _initialized(tiny_bert, inline=False):
    fix_random_seed(0)
    nlp = make_nlp(tiny_bert, inline=inline)
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    return nlp, examples


def _probs(nlp, examples):
    return [token_probs(d, "paraphrase") for d in nlp.pipe([eg.predicted.copy() for eg in examples])]


def test_registered_architectures_build_the_pair_shim(tiny_bert):
    for inline in (False, True):
        nlp = make_nlp(tiny_bert, inline=inline)
        assert type(_shim(nlp)) is PairHFShim and isinstance(_shim(nlp), HFShim)
        examples = make_examples(nlp)
        nlp.initialize(lambda: examples)
        shim = _shim(nlp)
        assert type(shim) is PairHFShim and shim._model is _transformer(nlp).transformer
        probs = _probs(nlp, examples)
        assert "predict" not in vars(shim) and "use_params" not in vars(shim)  # no instance patches
        copied = _transformer(nlp).copy()
        assert type(copied.layers[0].shims[0]) is PairHFShim
        # a trained pipeline through bytes: the same shim class, the same outputs
        nlp2 = spacy.util.load_model_from_config(nlp.config)
        nlp2.from_bytes(nlp.to_bytes())
        assert type(_shim(nlp2)) is PairHFShim
        for x, y in zip(probs, _probs(nlp2, examples)):
            numpy.testing.assert_array_equal(x, y)


def test_predict_does_not_toggle_train_and_eval(tiny_bert):
    nlp, examples = _initialized(tiny_bert)
    module = _shim(nlp)._model
    module.train()  # as after a training step
    modes = []
    train = module.train

    def spy(mode=True):
        modes.append(mode)
        return train(mode)

    module.train = spy  # Module.eval() calls self.train(False)
    first = _probs(nlp, examples)
    assert modes == [False] and module.training is False  # to eval once, not back to train
    modes.clear()
    _probs(nlp, examples)
    assert modes == []  # already in eval mode: no module walk at all
    nlp.update(examples, sgd=Adam(1e-3), drop=0.1)
    assert module.training is True  # training passes still run in train mode (dropout on)
    modes.clear()
    again = _probs(nlp, examples)
    assert modes == [False]
    # predictions do not depend on the mode the module was left in (dropout off)
    module.train()
    third = _probs(nlp, examples)
    for x, y in zip(again, third):
        numpy.testing.assert_allclose(x, y, atol=1e-6)
    assert any(not numpy.allclose(x, y) for x, y in zip(first, again))  # the update changed the model


def test_optimizer_averages_reach_the_transformer(tiny_bert):
    """With ``use_averages`` the optimizer keeps the transformer's averaged
    weights under ``(shim.id, name)`` keys; ``nlp.use_params`` (what ``spacy
    train`` evaluates and saves with) must put them into the torch module and
    restore the trained weights afterwards."""
    nlp, examples = _initialized(tiny_bert)
    opt = Adam(1e-2, use_averages=True)
    for _ in range(3):
        nlp.update(examples, sgd=opt)
    shim = _shim(nlp)
    name, param = next((n, p) for n, p in shim._model.named_parameters() if n.endswith("query.weight"))
    trained = param.detach().numpy().copy()
    average = opt.averages[(shim.id, name)]
    assert not numpy.allclose(trained, average)  # three steps: the average lags the weights
    plain = _probs(nlp, examples)
    with nlp.use_params(opt.averages):
        numpy.testing.assert_allclose(param.detach().numpy(), average, atol=1e-6)
        averaged = _probs(nlp, examples)
    numpy.testing.assert_allclose(param.detach().numpy(), trained)
    assert any(not numpy.allclose(x, y) for x, y in zip(plain, averaged))
    # string keys (the stock shim's form) still work, and unknown keys change nothing
    with shim.use_params({f"pytorch_{shim.id}_{name}": numpy.zeros_like(trained), ("other", name): 1}):
        assert not param.detach().numpy().any()
    numpy.testing.assert_allclose(param.detach().numpy(), trained)
    with shim.use_params({("other", name): 1}):
        numpy.testing.assert_allclose(param.detach().numpy(), trained)


def test_used_pipeline_pickles(tiny_bert):
    """A pipeline that has already predicted pickles (what nlp.pipe(n_process=...)
    does where workers are spawned) and gives the same outputs."""
    for inline in (False, True):
        nlp, examples = _initialized(tiny_bert, inline=inline)
        probs = _probs(nlp, examples)
        back = pickle.loads(pickle.dumps(nlp))
        assert type(_shim(back)) is PairHFShim
        for x, y in zip(probs, _probs(back, examples)):
            numpy.testing.assert_array_equal(x, y)


@pytest.mark.slow  # spawned workers import torch and load the pipeline again (about a minute)
def test_pipe_in_spawned_workers_after_predict(tiny_bert, tmp_path):
    nlp, examples = _initialized(tiny_bert)
    nlp.to_disk(tmp_path / "model")
    docs = [eg.predicted.copy() for eg in examples] * 2
    DocBin(docs=docs).to_disk(tmp_path / "in.spacy")
    code = textwrap.dedent(
        f"""
        import multiprocessing, numpy, spacy
        from spacy.tokens import DocBin
        from spacy_paraphrase import token_probs
        if __name__ == "__main__":
            multiprocessing.set_start_method("spawn")  # the pipeline is pickled to the workers
            nlp = spacy.load({str(tmp_path / 'model')!r})
            docs = list(DocBin().from_disk({str(tmp_path / 'in.spacy')!r}).get_docs(nlp.vocab))
            ref = list(nlp.pipe([d.copy() for d in docs]))  # predict first
            out = list(nlp.pipe(docs, n_process=2, batch_size=2))
            assert len(out) == len(ref)
            for a, b in zip(out, ref):
                numpy.testing.assert_allclose(token_probs(a), token_probs(b), rtol=1e-4, atol=1e-5)
            print("OK")
        """
    )
    script = tmp_path / "spawn_pipe.py"
    script.write_text(code, encoding="utf-8")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("OK")
