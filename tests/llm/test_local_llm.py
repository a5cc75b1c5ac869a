"""The real path, offline: Gemma 3 270M (base) served by llama-cpp-python's
OpenAI-compatible server on 127.0.0.1, the paraphrase_llm pipeline on a few
ContextDeP-like pairs, the cache on a second run. A 270M base model is weak:
this checks that every pair gets a complete, well-formed record, not quality."""
import math

import numpy
import pytest
import spacy

from spacy_paraphrase import make_pair_doc

from .helpers import GUEST, HOST, require

pytestmark = pytest.mark.slow

PAIRS = [(GUEST, HOST), ("It rained all day.", "How was the match?"),
         ("No, the flight was coming from Brazil.", "Coming from Brazil, OK.")]


def test_gemma_end_to_end(tmp_path):
    require("spacy_llm", "the LLM task")
    require("rapidfuzz", "fuzzy quote alignment")
    from spacy_paraphrase.llm.server import local_server, missing
    from tests.util import skip_optional

    if missing():
        skip_optional(f"the local LLM needs {missing()} (pip install '.[llm-local]')")
    with local_server(log=tmp_path / "server.log") as base:
        def pipeline():
            nlp = spacy.blank("en")
            nlp.add_pipe("paraphrase_llm", config={
                "task": {"@llm_tasks": "spacy_paraphrase.ContextDeP.v1", "n_samples": 2},
                "model": {"@llm_models": "spacy_paraphrase.OpenAICompatible.v1", "base_url": base,
                          "model": "gemma", "api": "completions", "api_key_env": "", "samples_per_request": 1,
                          "max_tokens": 80, "stop": ["\n\n", "\nGuest"], "max_concurrency": 1,
                          "timeout_s": 300, "cache_dir": str(tmp_path / "cache")},
            })
            return nlp

        nlp = pipeline()
        docs = list(nlp.pipe([make_pair_doc(nlp, a, b) for a, b in PAIRS]))
        model = nlp.get_pipe("paraphrase_llm")._model
        # 2 samples per pair, and a re-ask for each answer that did not parse (reask_unparsed)
        reasks = sum(d.spans["paraphrase"].attrs["llm"]["reasks"] for d in docs)
        assert model.stats["requests"] == 2 * len(PAIRS) + reasks == 2 * len(PAIRS) + model.stats["reasks"]
        assert model.stats["failed_prompts"] == 0
        for doc in docs:
            group = doc.spans["paraphrase"]
            details = group.attrs["llm"]
            assert details["error"] is None and details["n_samples"] == 2
            assert details["n_yes"] + details["n_no"] + details["n_unparsed"] == 2
            probs = group.attrs["token_probs"]
            assert probs.shape == (len(doc),)
            score = doc.cats["PARAPHRASE"]
            if details["n_yes"] + details["n_no"]:
                assert score == pytest.approx(details["n_yes"] / (details["n_yes"] + details["n_no"]))
                assert numpy.nanmax(probs) <= score + 1e-6
            else:
                assert math.isnan(score)
        # a second run: all from the cache, the same answers
        again = pipeline()
        docs2 = list(again.pipe([make_pair_doc(again, a, b) for a, b in PAIRS]))
        assert again.get_pipe("paraphrase_llm")._model.stats["requests"] == 0
        assert [d.spans["paraphrase"].attrs["llm"]["samples"] for d in docs2] == \
            [d.spans["paraphrase"].attrs["llm"]["samples"] for d in docs]
