import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import srsly

from .helpers import require

require("spacy_llm", "the LLM task")

CONFIGS = sorted((Path(__file__).resolve().parents[2] / "configs").glob("llm_*.cfg"))


def test_entry_points_in_fresh_interpreter(tmp_path):
    """spacy-llm's registries and spaCy find the task, models, scorer and
    factory without an import of spacy_paraphrase."""
    srsly.write_jsonl(tmp_path / "rec.jsonl", [{"match": "", "texts": ["Classification: No."]}])
    code = textwrap.dedent(f"""
        import sys
        import spacy
        from spacy_llm.registry import registry
        assert "spacy_paraphrase" not in sys.modules
        registry.llm_tasks.get("spacy_paraphrase.ContextDeP.v1")
        registry.llm_models.get("spacy_paraphrase.OpenAICompatible.v1")
        registry.llm_models.get("spacy_paraphrase.Replay.v1")
        spacy.registry.scorers.get("spacy_paraphrase.paraphrase_llm_scorer.v1")
        nlp = spacy.blank("en")
        nlp.add_pipe("llm", config={{"task": {{"@llm_tasks": "spacy_paraphrase.ContextDeP.v1"}},
                     "model": {{"@llm_models": "spacy_paraphrase.Replay.v1", "path": {str(tmp_path / "rec.jsonl")!r}}}}})
        nlp.add_pipe("paraphrase_llm", name="p2")
        print("OK")
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("OK")


@pytest.mark.parametrize("path", CONFIGS, ids=[p.name for p in CONFIGS])
def test_llm_configs_build(path, tmp_path):
    """Every configs/llm_*.cfg builds a paraphrase_llm pipeline (no request is sent)."""
    from spacy.util import load_config, load_model_from_config

    config = load_config(path, overrides={"paths.recordings": str(tmp_path / "rec.jsonl")} if "replay" in path.name
                         else {"paths.cache_dir": str(tmp_path / "cache")})
    srsly.write_jsonl(tmp_path / "rec.jsonl", [{"match": "", "texts": ["x"]}])
    nlp = load_model_from_config(config, auto_fill=True, validate=True)
    assert nlp.pipe_names == ["paraphrase_llm"]
    pipe = nlp.get_pipe("paraphrase_llm")
    assert pipe.cfg["threshold"] == 0.5 and pipe.task.n_samples == 3


def test_the_factory_module_loads_without_spacy_llm():
    """spaCy imports every factory entry point when it builds any pipeline:
    the paraphrase_llm factory must import without spacy-llm (a base install
    has none), and using it then names the install."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "sys.modules['spacy_llm'] = None\n"  # as if spacy-llm were not installed
        "import spacy_paraphrase.llm.factory as factory\n"
        "try:\n"
        "    factory._require_spacy_llm()\n"
        "except ImportError as err:\n"
        "    print('ERR', err)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "ERR" in out.stdout and "pip install 'spacy-paraphrase[llm]'" in out.stdout
