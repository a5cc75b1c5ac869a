from pathlib import Path

import subprocess
import sys
import textwrap

import pytest


# the training configs (configs/llm_*.cfg assemble LLM pipelines: tests/llm/test_registry.py)
TRAINING_CONFIGS = sorted(p.name for p in (Path(__file__).resolve().parents[1] / "configs").glob("*.cfg")
                          if not p.name.startswith("llm_"))
# Configs whose components are sourced from a pipeline `import-model` writes: built (and trained)
# from a real imported pipeline in tests/test_import_model.py.
SOURCED_CONFIGS = {"contextdep_paper_finetune.cfg"}


def test_entry_points_in_fresh_interpreter():
    """After `pip install`, spaCy finds everything without importing the package."""
    code = textwrap.dedent(
        """
        import sys
        import spacy
        from spacy.util import registry
        assert "spacy_paraphrase" not in sys.modules
        # the pair-score rules come from their own entry points (spacy_misc), not by the factory's import
        assert registry.misc.get("spacy_paraphrase.min_turn_top3_mean.v1")().name.endswith("top3_mean.v1")
        nlp = spacy.blank("en")
        pipe = nlp.add_pipe("paraphrase_spans")
        assert type(pipe).__name__ == "ParaphraseSpans"
        nlp.add_pipe("paraphrase_baseline", name="baseline")
        nlp.add_pipe("pair_classifier")
        for name in [
            "spacy_paraphrase.PairTransformerModel.v1",
            "spacy_paraphrase.PairTransformerListener.v1",
            "spacy_paraphrase.PairTransformer.v1",
            "spacy_paraphrase.ParaphraseTagger.v1",
            "spacy_paraphrase.PairClassifier.v1",
        ]:
            registry.architectures.get(name)
        registry.scorers.get("spacy_paraphrase.paraphrase_spans_scorer.v1")
        registry.scorers.get("spacy_paraphrase.pair_classifier_scorer.v1")
        registry.readers.get("spacy_paraphrase.PairCorpus.v1")
        registry.augmenters.get("spacy_paraphrase.swap_turns_augmenter.v1")
        for name in ["spacy_paraphrase.min_turn_max.v1", "spacy_paraphrase.min_turn_top3_mean.v1"]:
            assert registry.misc.get(name)().name == name
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


@pytest.mark.parametrize("name", [n for n in TRAINING_CONFIGS if n not in SOURCED_CONFIGS])
def test_every_shipped_config_builds(name):
    """Every config's pipeline can be built (all architecture arguments valid;
    no weights are loaded before initialize, so hub names need no download)."""
    from spacy.util import load_config, load_model_from_config

    config = load_config(Path(__file__).resolve().parents[1] / "configs" / name)
    nlp = load_model_from_config(config, auto_fill=True, validate=True)
    trf = nlp.get_pipe("transformer").model
    assert trf.attrs["max_padding"] == config["components"]["transformer"]["model"]["max_padding"]
    if name.endswith("_gpu.cfg"):
        assert config["components"]["transformer"]["model"]["mixed_precision"] is True


@pytest.mark.parametrize("name", TRAINING_CONFIGS)
def test_step_counted_schedules_end_with_training(name):
    """A config that trains for a fixed number of steps decays its learning
    rate over exactly those steps, after a 10% warm-up (rounded up): a longer
    schedule would stop training before the rate reaches zero."""
    import math

    from spacy.util import load_config

    training = load_config(Path(__file__).resolve().parents[1] / "configs" / name)["training"]
    schedule = training["optimizer"]["learn_rate"]
    if not training["max_steps"]:  # trained by epochs: the steps depend on the corpus
        assert training["max_epochs"] > 0 and 0 <= schedule["warmup_steps"] < schedule["total_steps"]
        return
    assert schedule["total_steps"] == training["max_steps"]
    assert schedule["warmup_steps"] == math.ceil(0.1 * training["max_steps"])
