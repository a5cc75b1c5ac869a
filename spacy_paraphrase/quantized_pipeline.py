"""A trained pipeline as a new pipeline whose transformer runs in int8 on CPU
(the ``quantize MODEL_DIR OUTPUT_DIR`` command: ``cli/quantize.py``).

The new directory is a copy of MODEL_DIR with the same fp32 weights; only
its ``config.cfg`` and ``meta.json`` change. Every pair transformer in the
config (``spacy_paraphrase.PairTransformerModel.v1`` / ``PairTransformer.v1``)
gets ``quantize`` set to ``--method``: ``int8-token`` (the default), ``int8``
or ``int8-smooth``, the names of the config setting (``encoder/quantize.py``), so
``spacy.load(OUTPUT_DIR)`` quantizes the transformer's Linear layers as it
loads them and ``spacy package`` packages it like any pipeline.
``meta.json`` gets ``spacy_paraphrase.quantize`` (method, setting, the
source pipeline's name and version) and, by default, the name
``<name>_<setting>`` (``_int8``, ``_int8_token``, ``_int8_smooth``).

``--method int8-smooth`` (``encoder/quantize.py``) also needs
``--calibrate PAIRS.spacy``: the fp32 pipeline is run on a seeded sample of
those pairs (``--calibration-pairs``, default 128; training pairs, not the
ones you evaluate on) and the channel maxima of every Linear layer's input
are saved with the transformer (its Hugging Face config); the fp32 weights
are unchanged. ``meta.json`` records the number of pairs, the file's name and
``alpha``. The copy is then written by ``nlp.to_disk`` (not copied file by
file), so files in MODEL_DIR that are not part of the pipeline are left out.

The copy is written beside OUTPUT_DIR, loaded and run once on a pair, and
only then moved into place (``saving.staged_swap``).
"""
import contextlib
import random
import shutil
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import srsly
from spacy.util import load_config
from thinc.api import Config

from .encoder.quantize import DEFAULT_ALPHA, QUANTIZE_METHODS, SMOOTHING_ATTR, calibrating, check_alpha, check_quantize
from .saving import staged_swap

SMOOTH_SETTING = "int8-smooth"
DEFAULT_METHOD = "int8-token"
DEFAULT_CALIBRATION_PAIRS = 128

META_KEY = "spacy_paraphrase"
# The pair transformer architectures (both take ``quantize``).
PAIR_TRANSFORMERS = ("spacy_paraphrase.PairTransformerModel.v1", "spacy_paraphrase.PairTransformer.v1")


class QuantizeCommandError(ValueError):
    """The pipeline cannot be quantized (no pair transformer, bad paths)."""


def pair_transformer_blocks(config: Config) -> List[Tuple[str, dict]]:
    """The (dotted path, block) of every pair transformer architecture under
    ``[components]`` of a pipeline config."""
    found: List[Tuple[str, dict]] = []

    def visit(node, path: str) -> None:
        if not isinstance(node, dict):
            return
        if node.get("@architectures") in PAIR_TRANSFORMERS:
            found.append((path, node))
        for key, value in node.items():
            visit(value, f"{path}.{key}")

    for name, block in config.get("components", {}).items():
        visit(block, f"components.{name}")
    return found


def quantize_config(config: Config, setting: str) -> List[str]:
    """Set ``quantize = setting`` on every pair transformer of ``config``, in
    place; returns the paths of their ``quantize`` settings."""
    setting = check_quantize(setting)
    paths = []
    for path, block in pair_transformer_blocks(config):
        block["quantize"] = setting
        paths.append(f"{path}.quantize")
    return paths


def quantize_overrides(model_dir: Path, setting: str) -> Dict[str, str]:
    """The config overrides that load the pipeline at ``model_dir`` with every
    pair transformer at ``quantize = setting``:
    ``spacy.load(model_dir, config=quantize_overrides(model_dir, "int8"))``
    is what the quantize command's output loads as; "" gives the pipeline as
    trained (where its weights on disk are fp32)."""
    setting = check_quantize(setting)
    config = load_config(Path(model_dir) / "config.cfg", interpolate=False)
    out: Dict[str, str] = {}
    for path, block in pair_transformer_blocks(config):
        out[f"{path}.quantize"] = setting
    return out


def quantize_meta(
    meta: Dict, method: str, setting: str, name: Optional[str], calibration: Optional[Dict] = None
) -> Dict:
    """``meta`` with the quantization recorded under ``spacy_paraphrase`` and
    the new name (default ``<name>_<setting>``, "-" as "_")."""
    meta = dict(meta)
    source = {key: meta.get(key) for key in ("lang", "name", "version")}
    record = dict(meta.get(META_KEY) or {})
    record["quantize"] = {"method": method, "setting": setting, "source_meta": source}
    if calibration is not None:
        record["quantize"]["calibration"] = calibration
    meta[META_KEY] = record
    if name is None:
        old = str(meta.get("name") or "pipeline")
        suffix = setting.replace("-", "_")
        name = old if old.endswith(f"_{suffix}") else f"{old}_{suffix}"
    meta["name"] = name
    return meta


def check_quantized_pipeline(path: Path) -> Dict:
    """Load the pipeline at ``path`` as ``spacy.load`` does, run it on one pair
    and count its quantized Linear layers (a pipeline with none is an error)."""
    import spacy

    from .encoder.shim import quantized_layer_count
    from .pair_doc import make_pair_doc

    nlp = spacy.load(path)
    n_linear = sum(
        quantized_layer_count(pipe.model)
        for _, pipe in nlp.pipeline
        if hasattr(getattr(pipe, "model", None), "walk")
    )
    if not n_linear:
        raise QuantizeCommandError(f"The pipeline written to {path} has no quantized Linear layer.")
    doc = nlp(make_pair_doc(nlp, "I like this city a lot", "this city is great"))
    return {"quantized_linear_layers": n_linear, "cats": dict(doc.cats)}


def calibration_docs(nlp, data: Path, n_pairs: int, seed: int = 0) -> list:
    """A seeded random sample of ``n_pairs`` pair Docs of ``data`` (all of
    them when it has fewer), in file order."""
    from .corpus import PairCorpus

    docs = [eg.predicted for eg in PairCorpus(Path(data))(nlp)]
    if not docs:
        raise QuantizeCommandError(f"{data} holds no pairs to calibrate on.")
    if n_pairs < len(docs):
        keep = sorted(random.Random(seed).sample(range(len(docs)), n_pairs))
        docs = [docs[i] for i in keep]
    return docs


def calibrate_pipeline(nlp, docs: list, alpha: float = DEFAULT_ALPHA, batch_size: int = 8) -> int:
    """Run ``nlp`` (fp32) on ``docs`` recording every pair transformer's
    activation calibration (``encoder/quantize.py``), and set it on each
    module's Hugging Face config; returns the number of modules."""
    from .encoder.shim import pipeline_transformer_modules  # spacy-transformers

    modules = pipeline_transformer_modules(nlp)
    if not modules:
        raise QuantizeCommandError("The pipeline has no pair transformer with weights to calibrate.")
    with contextlib.ExitStack() as stack:
        calibrations = [stack.enter_context(calibrating(m)) for m in modules]
        for _ in nlp.pipe([doc.copy() for doc in docs], batch_size=batch_size):
            pass
    for module, calibration in zip(modules, calibrations):
        setattr(module.config, SMOOTHING_ATTR, calibration.record(alpha, len(docs)))
    return len(modules)


def method_setting(method: str) -> str:
    """The ``quantize`` setting ``--method`` names (``QUANTIZE_METHODS``, or
    an older spelling of one)."""
    try:
        setting = check_quantize(method)
    except ValueError:
        setting = ""
    if not setting:
        raise QuantizeCommandError(
            f"Unknown method {method!r}; choose one of {', '.join(QUANTIZE_METHODS)}."
        )
    return setting


def quantize_pipeline(
    model_dir: Path,
    output_dir: Path,
    method: str = DEFAULT_METHOD,
    name: Optional[str] = None,
    calibrate: Optional[Path] = None,
    calibration_pairs: int = DEFAULT_CALIBRATION_PAIRS,
    alpha: float = DEFAULT_ALPHA,
) -> Dict:
    """Write ``model_dir`` quantized by ``method`` to the new directory
    ``output_dir`` (module docstring); returns what was done."""
    model_dir, output_dir = Path(model_dir), Path(output_dir)
    setting = method_setting(method)
    method = setting  # one name for both (an older spelling is recorded as its name)
    if setting == SMOOTH_SETTING:
        if calibrate is None:
            raise QuantizeCommandError(
                f"--method {method} needs --calibrate PAIRS.spacy: pairs (from training data, not the "
                "ones you evaluate on) to measure the activations on."
            )
        if calibration_pairs < 1:
            raise QuantizeCommandError(f"--calibration-pairs must be >= 1, got {calibration_pairs}.")
        check_alpha(alpha)
    elif calibrate is not None:
        raise QuantizeCommandError(f"--calibrate is for --method {SMOOTH_SETTING}; {method} uses no calibration.")
    if not (model_dir / "config.cfg").is_file() or not (model_dir / "meta.json").is_file():
        raise QuantizeCommandError(f"{model_dir} is not a pipeline directory (config.cfg, meta.json).")
    if output_dir.exists() and (not output_dir.is_dir() or any(output_dir.iterdir())):
        raise QuantizeCommandError(f"{output_dir} exists and is not empty: give a new directory.")
    if output_dir.resolve() == model_dir.resolve() or model_dir.resolve() in output_dir.resolve().parents:
        raise QuantizeCommandError(f"{output_dir} is {model_dir} or inside it: give a directory elsewhere.")
    config = load_config(model_dir / "config.cfg", interpolate=False)
    paths = quantize_config(config, setting)
    if not paths:
        raise QuantizeCommandError(
            f"No spacy_paraphrase pair transformer in {model_dir / 'config.cfg'}: nothing to quantize."
        )
    calibration = None
    nlp = None
    if setting == SMOOTH_SETTING:
        import spacy

        nlp = spacy.load(model_dir, config=quantize_overrides(model_dir, ""))
        docs = calibration_docs(nlp, calibrate, calibration_pairs)
        calibrate_pipeline(nlp, docs, alpha)
        calibration = {"data": Path(calibrate).name, "pairs": len(docs), "alpha": float(alpha)}
    meta = quantize_meta(srsly.read_json(model_dir / "meta.json"), method, setting, name, calibration)
    check: Dict = {}

    def build(copy: Path) -> None:
        if nlp is not None:  # the calibration is saved with the transformer's weights
            nlp.to_disk(copy)
        else:
            shutil.copytree(model_dir, copy)
        config.to_disk(copy / "config.cfg")
        srsly.write_json(copy / "meta.json", meta)
        check.update(check_quantized_pipeline(copy))

    staged_swap(output_dir, build)
    return {"settings": paths, "setting": setting, "name": meta["name"], "calibration": calibration, **check}
