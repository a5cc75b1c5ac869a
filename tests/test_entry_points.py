from pathlib import Path

import subprocess
import sys
import textwrap

import pytest

from tests.util import make_examples, make_nlp


def test_entry_points_in_fresh_interpreter():
    """After `pip install`, spaCy finds everything without importing the package."""
    code = textwrap.dedent(
        """
        import sys
        import spacy
        from spacy.util import registry
        assert "spacy_paraphrase" not in sys.modules
        nlp = spacy.blank("en")
        pipe = nlp.add_pipe("paraphrase_spans")
        assert type(pipe).__name__ == "ParaphraseSpans"
        nlp.add_pipe("paraphrase_baseline", name="baseline")
        nlp.add_pipe("pair_classifier")
        for name in [
            "spacy_paraphrase.PairTransformerModel.v1",
            "spacy_paraphrase.PairTransformerListener.v1",
            "spacy_paraphrase.PairTransformer.v1",
            "spacy_paraphrase.PairTransformerModel.v2",
            "spacy_paraphrase.PairTransformer.v2",
            "spacy_paraphrase.ParaphraseTagger.v1",
            "spacy_paraphrase.PairClassifier.v1",
        ]:
            registry.architectures.get(name)
        registry.scorers.get("spacy_paraphrase.paraphrase_spans_scorer.v1")
        registry.scorers.get("spacy_paraphrase.pair_classifier_scorer.v1")
        registry.readers.get("spacy_paraphrase.PairCorpus.v1")
        print("OK")
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("OK")


def test_training_config_resolves_without_code(tmp_path):
    """`spacy debug config` on the shipped CPU config needs no --code."""
    from pathlib import Path

    cfg = Path(__file__).resolve().parents[1] / "configs" / "contextdep_minilm_cpu.cfg"
    result = subprocess.run(
        [sys.executable, "-m", "spacy", "debug", "config", str(cfg), "--paths.train", str(tmp_path), "--paths.dev", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "Config is valid" in result.stdout


@pytest.mark.parametrize("name", sorted(p.name for p in (Path(__file__).resolve().parents[1] / "configs").glob("*.cfg")))
def test_every_shipped_config_builds(name, tiny_bert, tmp_path):
    """Every config's pipeline can be built (all architecture arguments valid;
    no weights are loaded before initialize, so hub names need no download).
    A config that sources its transformer from a trained pipeline
    (``paths.pair_encoder``) gets a tiny one."""
    from spacy.util import load_config, load_model_from_config

    overrides = {}
    path = Path(__file__).resolve().parents[1] / "configs" / name
    if "source" in load_config(path)["components"]["transformer"]:
        pair_encoder = make_nlp(tiny_bert)
        pair_encoder.initialize(lambda: make_examples(pair_encoder))
        pair_encoder.to_disk(tmp_path / "pair_encoder")
        overrides["paths.pair_encoder"] = str(tmp_path / "pair_encoder")
    config = load_config(path, overrides=overrides)
    nlp = load_model_from_config(config, auto_fill=True, validate=True)
    trf = nlp.get_pipe("transformer").model
    if overrides:  # sourced: the trained pipeline's transformer, weights and all
        assert trf.attrs["has_transformer"] and trf.attrs["name"] == tiny_bert
        return
    assert trf.attrs["max_padding"] == config["components"]["transformer"]["model"]["max_padding"]
    if name.endswith("_gpu.cfg"):
        assert config["components"]["transformer"]["model"]["mixed_precision"] is True
