"""A published Hugging Face token classifier as a ``paraphrase_spans`` pipeline
(the ``import-model SOURCE OUTPUT_DIR`` command: ``cli/import_model.py``).

The ContextDeP authors released their DeBERTa-v3-large classifiers
(``AnnaWegmann/Highlight-Paraphrases-in-Dialog``, ``-ALL``) as
``AutoModelForTokenClassification`` checkpoints with two labels (``LABEL_1`` =
part of a paraphrase), saved by ``save_pretrained`` with their tokenizer. Any
checkpoint of that kind (BERT, RoBERTa, DeBERTa, ...) imports the same way:

- its encoder becomes the pipeline's ``transformer``
  (``spacy_paraphrase.PairTransformerModel.v1``; the weights are saved in the
  pipeline directory, so loading never goes back to the source);
- its two-label classifier becomes the head of ``paraphrase_spans``
  (``ParaphraseTagger.v1`` with ``head_labels = 2``: the same weights,
  probability = softmax of label 1);
- the authors' inference is written as settings (``AUTHORS_PROTOCOL``): each
  word read at its first wordpiece (``pooling = "first"``), a pair over the
  model's length cut at the end (``long_pairs = "truncate"``), token type ids
  all 0 (``token_types = "single"``, their one-sequence input), and a word
  highlighted / a pair a paraphrase when the probability is *above* 0.5
  (``threshold = highlight_threshold = ABOVE_HALF``, 0.50000005: a float32
  probability is ``>=`` it exactly when it is ``> 0.5``).

What differs from their script, and why: docs/paper-model.md. Everything the
project adds (windows for long pairs, strings as well as word lists, phrase
decoding, ``turn_max``, tuned thresholds) is a setting changed on top, at load
time or by ``tune``.

Nothing is written unless the whole import succeeds: the checks come first,
then the pipeline is built in a staging folder beside OUTPUT_DIR, loaded back
and run on one pair, and only then moved into place (``saving.staged_swap``).
"""
import errno
import gc
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Optional


from .backbones.resolve import hub_cached_folder, hub_offline, weights_sha256
from .saving import check_save_target, staged_swap

META_KEY = "spacy_paraphrase"
# The authors' evaluation rule is "probability > 0.5"; the readout compares
# with >=. No float32 lies strictly between 0.5 and 0.5000000596 (the next
# one), so a float32 probability p satisfies p >= ABOVE_HALF exactly when
# p > 0.5, whether compared in float32 or float64, and the number survives the
# config's float formatting.
ABOVE_HALF = 0.50000005
AUTHORS_PROTOCOL = {
    "pooling": "first",
    "head_labels": 2,
    "long_pairs": "truncate",
    "token_types": "single",
    "threshold": ABOVE_HALF,
    "highlight_threshold": ABOVE_HALF,
}
# The ContextDeP paper, to cite with its checkpoints.
CONTEXTDEP_CITATION = (
    "Anna Wegmann, Tijs van den Broek and Dong Nguyen. 2024. What's Mine becomes Yours: Defining, "
    "Annotating and Detecting Context-Dependent Paraphrases in News Interview Dialogs. In Proceedings "
    "of EMNLP 2024.")
# What the authors say of the checkpoints this project knows, beside the licence
# their model cards carry (read from the card at import: ``card_licence``).
KNOWN_TERMS = {
    "AnnaWegmann/Highlight-Paraphrases-in-Dialog": (
        "the authors make data and models available for research purposes; ContextDeP's "
        "interviews come from MediaSum, whose terms apply to them. Trained on the aggregated labels; "
        "the paper's DeBERTa-v3-large row, seed 202: test F1 0.76, P 0.72, R 0.84"),
    "AnnaWegmann/Highlight-Paraphrases-in-Dialog-ALL": (
        "the authors make data and models available for research purposes; ContextDeP's "
        "interviews come from MediaSum, whose terms apply to them. Trained on all annotations; "
        "seed 201: test F1 0.72, P 0.84, R 0.63"),
}
NO_LICENCE = "none stated: the checkpoint's model card (README.md) gives no licence; ask its authors"


def card_licence(folder: Path) -> Optional[str]:
    """The ``license:`` of a checkpoint's model card (the YAML front matter of
    its ``README.md``, as the hub shows it), as written; None when there is
    no card, no front matter or no licence in it."""
    import srsly

    card = Path(folder) / "README.md"
    if not card.is_file():
        return None
    text = card.read_text(encoding="utf-8-sig", errors="replace").replace("\r\n", "\n")
    if not text.startswith("---\n"):
        return None
    end = text.find("\n---", 3)
    if end < 0:
        return None
    try:
        front = srsly.yaml_loads(text[4:end])
    except Exception:  # a card whose front matter is no YAML: no licence read from it
        return None
    licence = front.get("license") if isinstance(front, dict) else None
    if isinstance(licence, (list, tuple)):
        licence = ", ".join(str(x) for x in licence if x)
    return str(licence).strip() or None if licence else None


class ImportModelError(ValueError):
    """The source cannot be imported (one line, said before anything is written)."""


@dataclass
class Checkpoint:
    """A token classifier found on disk: where, what it is and where it came from."""

    name: str  # as the user gave it (a hub name or a folder)
    folder: Path
    source: str  # "hub" | "local"
    revision: Optional[str]  # the hub commit, when known
    sha256: Optional[str]  # of the weights file
    architecture: str
    model_type: str
    positive: int = 1  # the label index meaning "part of a paraphrase"
    positive_label: str = "LABEL_1"
    # where each weight tensor is (weights_file.checkpoint_index), read once by _describe
    tensors: Optional[Dict] = field(default=None, repr=False)


def find_checkpoint(source: str, revision: Optional[str] = None, positive_label: Optional[str] = None) -> Checkpoint:
    """The folder of ``source``: a local folder saved by ``save_pretrained``,
    else the hub name in the Hugging Face cache, else downloaded from the hub.
    ImportModelError when none of these has it."""
    path = Path(source).expanduser()
    if path.is_dir():
        return _describe(source, path, "local", None, positive_label)
    if path.exists():
        raise ImportModelError(f"{source} is a file, not a folder saved by save_pretrained.")
    cached = hub_cached_folder(source) if revision is None else None
    if cached is not None and has_tokenizer_files(cached):
        return _describe(source, cached, "hub", cached.name, positive_label)
    if cached is not None and hub_offline():
        raise ImportModelError(
            f"'{source}' is in the Hugging Face cache without its tokenizer files ({', '.join(TOKENIZER_FILES[:3])}, "
            "...) and the hub is off (HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE): import once with the hub on, which "
            "fetches only the missing files.")
    # Not cached, or cached without its tokenizer (the model alone was loaded
    # before): the download fetches what is missing and reuses the rest.
    folder = _download(source, revision)
    return _describe(source, folder, "hub", folder.name, positive_label)


ALLOW_PATTERNS = ["*.json", "*.safetensors", "*.bin", "*.model", "*.txt", "*.md"]
# Files a checkpoint's tokenizer is loaded from (one of them is enough with tokenizer_config.json).
TOKENIZER_FILES = ("tokenizer.json", "spm.model", "vocab.txt", "vocab.json", "sentencepiece.bpe.model")


def _download(name: str, revision: Optional[str]) -> Path:
    """``snapshot_download`` of the checkpoint's files into the Hugging Face
    cache (files already there are not fetched again). ImportModelError,
    one line saying which failure: no such repository (or private), gated,
    no such revision, the network, or the disk (with the bytes needed)."""
    how = (f"download it where the hub is reachable (`huggingface-cli download {name} --local-dir DIR`, or "
           f"`save_pretrained(DIR)` of the model and its tokenizer) and give DIR instead of the name")
    if hub_offline():
        raise ImportModelError(
            f"Cannot fetch '{name}': the Hugging Face hub is off (HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE) "
            f"and it is not in the local cache; {how}.")
    import huggingface_hub
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError, RevisionNotFoundError

    check_disk_space(name, revision)
    try:
        folder = huggingface_hub.snapshot_download(name, revision=revision, etag_timeout=10, allow_patterns=ALLOW_PATTERNS)
    except GatedRepoError:
        raise ImportModelError(
            f"Cannot fetch '{name}': it is a gated repository; accept its terms on its hub page and log in "
            "(`huggingface-cli login`, or HF_TOKEN), then import again.") from None
    except RepositoryNotFoundError:
        raise ImportModelError(
            f"Cannot fetch '{name}': the hub has no such repository, or it is private (then log in with "
            "`huggingface-cli login` or set HF_TOKEN); check the name.") from None
    except RevisionNotFoundError:
        raise ImportModelError(f"Cannot fetch '{name}': it has no revision {revision!r}.") from None
    except OSError as err:
        if getattr(err, "errno", None) == errno.ENOSPC:
            raise ImportModelError(f"Cannot fetch '{name}': the disk is full ({_space_needed(name, revision)}); "
                                   "free space, or set HF_HOME to a disk with room.") from None
        raise ImportModelError(
            f"Cannot fetch '{name}': the Hugging Face hub is not reachable ({type(err).__name__}); {how}.") from None
    except Exception as err:  # anything else the hub client raises: one line
        raise ImportModelError(f"Cannot fetch '{name}' from the Hugging Face hub ({type(err).__name__}); {how}.") from None
    return Path(folder)


def _remote_size(name: str, revision: Optional[str]) -> Optional[int]:
    """The bytes of the files ``_download`` fetches, from the hub's file list; None when unknown."""
    import fnmatch

    try:
        import huggingface_hub

        info = huggingface_hub.HfApi().model_info(name, revision=revision, files_metadata=True, timeout=10)
    except Exception:  # the download itself then says what is wrong
        return None
    sizes = [sib.size or 0 for sib in info.siblings or []
             if any(fnmatch.fnmatch(sib.rfilename, pattern) for pattern in ALLOW_PATTERNS)]
    return sum(sizes) if sizes else None


def _cache_dir() -> Path:
    from huggingface_hub.constants import HF_HUB_CACHE

    path = Path(HF_HUB_CACHE)
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _space_needed(name: str, revision: Optional[str]) -> str:
    import shutil

    needed, free = _remote_size(name, revision), shutil.disk_usage(_cache_dir()).free
    return (f"it needs {needed / 1e9:.2f} GB, {free / 1e9:.2f} GB are free in {_cache_dir()}" if needed
            else f"{free / 1e9:.2f} GB are free in {_cache_dir()}")


def check_disk_space(name: str, revision: Optional[str]) -> None:
    """Refuse before downloading when the hub says the files need more room
    than the cache's disk has (no half-downloaded checkpoint)."""
    import shutil

    needed = _remote_size(name, revision)
    if needed is not None and needed > shutil.disk_usage(_cache_dir()).free:
        raise ImportModelError(f"Cannot fetch '{name}': the disk is too small ({_space_needed(name, revision)}); "
                               "free space, or set HF_HOME to a disk with room.")


def has_tokenizer_files(folder: Path) -> bool:
    return any((Path(folder) / f).is_file() for f in TOKENIZER_FILES)


def _describe(name: str, folder: Path, source: str, revision: Optional[str],
              positive_label: Optional[str] = None) -> Checkpoint:
    config_path = folder / "config.json"
    if not config_path.is_file():
        raise ImportModelError(f"{name} has no config.json: not a folder saved by save_pretrained.")
    try:
        config = json.loads(config_path.read_text(encoding="utf8"))
    except ValueError as err:
        raise ImportModelError(f"{name}: config.json is not valid JSON ({err}).") from None
    architectures = config.get("architectures") or []
    token_classifiers = [a for a in architectures if str(a).endswith("ForTokenClassification")]
    if not token_classifiers:
        raise ImportModelError(
            f"{name} is not a token classifier (architectures: {', '.join(map(str, architectures)) or 'none'}); "
            "import-model takes an AutoModelForTokenClassification checkpoint with 2 labels.")
    n_labels = len(config.get("id2label") or {}) or int(config.get("num_labels", 2))
    if n_labels != 2:
        raise ImportModelError(
            f"{name} has {n_labels} labels; import-model takes a token classifier with exactly 2 "
            "(label 1 = part of a paraphrase).")
    positive = positive_index(name, config, positive_label)
    from .encoder.weights_file import WeightsFileError, checkpoint_index

    try:
        tensors = checkpoint_index(folder)  # headers only: a missing shard or a damaged file is said here
    except WeightsFileError as err:
        raise ImportModelError(f"{name}: {err}") from None
    sha256 = weights_sha256(folder)  # one pass over the weights file (1.7 GB for DeBERTa-v3-large)
    if sha256 is None:
        raise ImportModelError(f"{name} has no weights file (model.safetensors or pytorch_model.bin, or its shards).")
    labels = {int(k): str(v) for k, v in (config.get("id2label") or {}).items()}
    return Checkpoint(name, folder, source, revision, sha256, token_classifiers[0],
                      str(config.get("model_type", "")), positive, labels.get(positive, f"LABEL_{positive}"), tensors)


def positive_index(name: str, config: Dict, positive_label: Optional[str] = None) -> int:
    """Which of the two labels means "part of a paraphrase": ``positive_label``
    when given; else label 1 when the labels are unnamed (``LABEL_0`` /
    ``LABEL_1``, as the authors' checkpoints have them). Named labels without
    ``positive_label``: ImportModelError asking to name it (``--positive-label``)."""
    try:
        labels = {int(k): str(v) for k, v in (config.get("id2label") or {}).items()}
    except (TypeError, ValueError, AttributeError):
        raise ImportModelError(f"{name}: config.json's id2label is not a map of label ids to names.") from None
    shown = ", ".join(f"{i}: {labels[i]!r}" for i in sorted(labels))
    if positive_label is not None:
        matches = [i for i, label in labels.items() if label == positive_label]
        if not matches:
            raise ImportModelError(f"{name} has no label {positive_label!r} (its labels: {shown or 'none named'}).")
        return matches[0]
    if not labels or set(labels.values()) == {"LABEL_0", "LABEL_1"}:
        return next((i for i, label in labels.items() if label == "LABEL_1"), 1)
    raise ImportModelError(
        f"{name}'s labels are named ({shown}): say which one means 'part of a paraphrase' with "
        "--positive-label NAME.")


def load_classifier(checkpoint: Checkpoint):
    """The tokenizer (fast, with offsets), the token classifier's encoder
    (built without weights and read from the checkpoint's file in the memory
    of its weights: ``encoder/weights_file.py``) and its two-label head
    (weight (2, width), bias (2,)) as numpy arrays."""
    from .encoder import lean_imports  # noqa: F401  (first: transformers without scikit-learn and scipy)
    from transformers import AutoConfig, AutoModel, AutoTokenizer
    from .encoder.weights_file import WeightsFileError, checkpoint_index, empty_module, load_weights, read_tensor

    try:
        tokenizer = AutoTokenizer.from_pretrained(str(checkpoint.folder), use_fast=True)
    except Exception as err:
        raise ImportModelError(f"{checkpoint.name}: its tokenizer does not load ({type(err).__name__}: "
                               f"{_first_line(err)}).") from None
    if not getattr(tokenizer, "is_fast", False):
        raise ImportModelError(
            f"{checkpoint.name}: its tokenizer ({type(tokenizer).__name__}) gives no character offsets; "
            "the pipeline aligns wordpieces to words by offsets and needs a fast tokenizer (tokenizer.json).")
    try:
        config = AutoConfig.from_pretrained(str(checkpoint.folder))
        with empty_module():
            encoder = AutoModel.from_config(config)
    except Exception as err:
        raise ImportModelError(f"{checkpoint.name}: the token classifier does not load ({type(err).__name__}: "
                               f"{_first_line(err)}).") from None
    try:
        index = checkpoint.tensors if checkpoint.tensors is not None else checkpoint_index(checkpoint.folder)
        weight, bias = index.get("classifier.weight"), index.get("classifier.bias")
        if weight is None or bias is None or tuple(weight.shape)[0] != 2:
            raise ImportModelError(
                f"{checkpoint.name}: no linear 'classifier' head with 2 outputs and a bias was found.")
        prefix = f"{encoder.base_model_prefix}." if any(k.startswith(f"{encoder.base_model_prefix}.") for k in index) else ""
        used = load_weights(encoder, index, key=lambda name: _stored_name(index, prefix + name), strict=False,
                            zeros_for=lambda name: name.startswith("pooler."))
        unused = [k for k in index if k.startswith(prefix) and k not in used and not k.startswith("classifier.")
                  and not k.endswith("position_ids")]
        if prefix and unused:
            raise WeightsFileError(f"the encoder does not use {len(unused)} of its weights ({unused[0]}, ...)")
        head = (read_tensor(weight).float().numpy(), read_tensor(bias).float().numpy())
        if checkpoint.positive == 0:  # the pipeline reads label 1's softmax: put the positive label there
            head = (head[0][::-1].copy(), head[1][::-1].copy())
    except WeightsFileError as err:
        raise ImportModelError(f"{checkpoint.name}: {err}") from None
    return tokenizer, encoder, head[0], head[1]


def _stored_name(index, name: str) -> str:
    """A parameter's name in the checkpoint: as the module names it, or the
    older LayerNorm spelling (``gamma`` / ``beta``) some checkpoints keep."""
    if name not in index:
        for new, old in ((".weight", ".gamma"), (".bias", ".beta")):
            if name.endswith(new) and name[: -len(new)] + old in index:
                return name[: -len(new)] + old
    return name


def _first_line(err: Exception) -> str:
    text = str(err).strip()
    return text.splitlines()[0][:200] if text else ""


def pipeline_config(checkpoint: Checkpoint, lang: str, long_pairs: str):
    """The config of the imported pipeline: a ``transformer`` over the
    checkpoint's encoder, ``paraphrase_spans`` listening to it with the
    authors' readout (``AUTHORS_PROTOCOL``), and a ``doc_cleaner``."""
    from thinc.api import Config

    protocol = dict(AUTHORS_PROTOCOL, long_pairs=long_pairs)
    return Config({
        "nlp": {"lang": lang, "pipeline": ["transformer", "paraphrase_spans", "doc_cleaner"],
                "batch_size": 16},
        "components": {
            "transformer": {
                "factory": "pair_transformer",
                "max_batch_items": 4096,
                "set_extra_annotations": {"@annotation_setters": "spacy-transformers.null_annotation_setter.v1"},
                "model": {
                    "@architectures": "spacy_paraphrase.PairTransformerModel.v1",
                    "name": str(checkpoint.folder),
                    "tokenizer_config": {"use_fast": True},
                    "max_length": 0,
                    "long_pairs": protocol["long_pairs"],
                    "token_types": protocol["token_types"],
                },
            },
            "paraphrase_spans": {
                "factory": "paraphrase_spans",
                "threshold": protocol["threshold"],
                "highlight_threshold": protocol["highlight_threshold"],
                "model": {
                    "@architectures": "spacy_paraphrase.ParaphraseTagger.v1",
                    "dropout": 0.1,
                    "grad_factor": 1.0,
                    "pooling": protocol["pooling"],
                    "head_labels": protocol["head_labels"],
                    "tok2vec": {"@architectures": "spacy_paraphrase.PairTransformerListener.v1", "upstream": "*"},
                },
            },
            "doc_cleaner": {"factory": "doc_cleaner", "attrs": {"_.trf_data": None}, "silent": True},
        },
    })


def import_model(source: str, output_dir: Path, *, revision: Optional[str] = None, lang: str = "en",
                 long_pairs: str = "truncate", name: Optional[str] = None, force: bool = False,
                 positive_label: Optional[str] = None) -> Dict:
    """Import the token classifier ``source`` (module doc) into the new
    pipeline directory ``output_dir``. Returns what was written (the
    ``meta.json`` block ``spacy_paraphrase.imported`` and the pipeline's name).
    ImportModelError (one line) when the source or the target is refused;
    nothing is written then. ``force``: replace an existing pipeline
    directory at ``output_dir`` (only once the new one loads and runs).

    It runs with the ``lean`` heap (annotate/heap.py): a one-off step whose
    peak is what a laptop must hold, every large block a mapping of its own,
    given back when freed. The caller's process gets its own policy back
    afterwards."""
    from .annotate.heap import heap_policy

    with heap_policy("lean"):
        return _import_model(source, output_dir, revision=revision, lang=lang, long_pairs=long_pairs,
                             name=name, force=force, positive_label=positive_label)


def _import_model(source: str, output_dir: Path, *, revision: Optional[str], lang: str, long_pairs: str,
                  name: Optional[str], force: bool, positive_label: Optional[str]) -> Dict:
    import spacy
    from .encoder import lean_imports  # noqa: F401  (first: transformers without scikit-learn and scipy)
    from spacy_transformers.data_classes import HFObjects
    from .encoder.model import attach_transformer, vocab_file_contents
    from .encoder.plan import check_long_pairs

    output_dir = Path(output_dir)
    try:
        check_long_pairs(long_pairs)
    except ValueError as err:
        raise ImportModelError(str(err)) from None
    check_target(output_dir, source, force)
    checkpoint = find_checkpoint(source, revision, positive_label)
    check_target(output_dir, str(checkpoint.folder), force)
    tokenizer, encoder, weight, bias = load_classifier(checkpoint)
    config = pipeline_config(checkpoint, lang, long_pairs)
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    # The checkpoint's encoder is handed over as it is: initialize loads nothing again.
    attach_transformer(nlp.get_pipe("transformer").model,
                       HFObjects(tokenizer, encoder, vocab_file_contents(tokenizer)))
    del encoder
    nlp.initialize()
    linear = nlp.get_pipe("paraphrase_spans").model.get_ref("head").layers[-1]
    if linear.get_param("W").shape != weight.shape:
        raise ImportModelError(
            f"{checkpoint.name}: its classifier is {weight.shape[1]} wide but its encoder gives "
            f"{linear.get_param('W').shape[1]}-wide vectors.")
    linear.set_param("W", linear.ops.asarray2f(weight))
    linear.set_param("b", linear.ops.asarray1f(bias))
    imported = imported_record(checkpoint, tokenizer, long_pairs)
    transformer = nlp.get_pipe("transformer").model
    # The saved config names the source as the user gave it (a hub name, or
    # the folder as typed), not this machine's cache path.
    transformer.attrs["name"] = checkpoint.name
    nlp.config["components"]["transformer"]["model"]["name"] = checkpoint.name
    transformer.attrs["backbone"] = {
        "name": checkpoint.name, "source": checkpoint.source, "sha256": checkpoint.sha256,
        "licence": imported["licence"] or NO_LICENCE, "packages": None}
    meta = nlp.meta
    meta["name"] = name or default_name(checkpoint.name)
    meta["version"] = "1.0.0"
    meta["description"] = (f"{checkpoint.name} ({checkpoint.architecture}) imported as a paraphrase_spans "
                           "pipeline with the ContextDeP authors' inference (docs/paper-model.md).")
    meta["license"] = imported["licence"] or NO_LICENCE
    meta["sources"] = [{"name": checkpoint.name, "url": imported["url"], "license": meta["license"],
                        "terms": imported["terms"], **({"cite": imported["cite"]} if imported["cite"] else {})}]
    meta.setdefault(META_KEY, {})["imported"] = imported
    meta[META_KEY]["backbone"] = dict(transformer.attrs["backbone"])

    # The pipeline written, it is freed before the written one is loaded to
    # check it: the weights are never in memory twice.
    built = [nlp]
    del nlp, transformer, linear, meta

    def build(folder: Path) -> None:
        built.pop().to_disk(folder)
        gc.collect()
        check_loads(folder)

    pipeline_name = built[0].meta["name"]
    staged_swap(output_dir, build)
    return {"name": pipeline_name, "imported": imported}


def check_target(output_dir: Path, source: str, force: bool = False) -> None:
    """OUTPUT_DIR must be new or empty (with ``force``, a pipeline directory
    is replaced too), and never the source or inside it."""
    output_dir = Path(output_dir)
    replaceable = force and (output_dir / "config.cfg").is_file()
    if output_dir.exists() and (not output_dir.is_dir() or any(output_dir.iterdir())) and not replaceable:
        raise ImportModelError(f"{output_dir} exists and is not empty: give a new directory "
                               "(--force replaces a pipeline directory).")
    src = Path(source).expanduser()
    if src.exists():
        out, src = output_dir.resolve(), src.resolve()
        if out == src or src in out.parents:
            raise ImportModelError(f"{output_dir} is the source or inside it: give a directory elsewhere.")
    try:
        check_save_target(output_dir, in_place=False)
    except ValueError as err:
        raise ImportModelError(str(err)) from None


def imported_record(checkpoint: Checkpoint, tokenizer, long_pairs: str) -> Dict:
    """The ``meta.json`` block ``spacy_paraphrase.imported``."""
    sep_is_separator = tokenizer.convert_tokens_to_ids("[SEP]") == tokenizer.sep_token_id
    hub = checkpoint.source == "hub"
    return {
        "source": checkpoint.name,
        "from": checkpoint.source,
        "revision": checkpoint.revision,
        "sha256": checkpoint.sha256,
        "architecture": checkpoint.architecture,
        "model_type": checkpoint.model_type,
        "url": f"https://huggingface.co/{checkpoint.name}" if hub else "",
        "licence": card_licence(checkpoint.folder),
        "licence_from": "the model card's front matter (README.md, license:)",
        "terms": KNOWN_TERMS.get(checkpoint.name, "none stated beyond the licence"),
        "cite": CONTEXTDEP_CITATION if checkpoint.name in KNOWN_TERMS else None,
        "protocol": dict(AUTHORS_PROTOCOL, long_pairs=long_pairs),
        "positive_label": checkpoint.positive_label,
        # The authors' input is one sequence with the word "[SEP]" between the
        # turns; it is the same as the text pair this pipeline encodes only when
        # "[SEP]" is the tokenizer's separator (BERT, DeBERTa; not RoBERTa).
        "sep_word_is_separator": bool(sep_is_separator),
    }


def default_name(source: str) -> str:
    """A meta.json name spacy package accepts, from the source's last part."""
    stem = Path(source.rstrip("/")).name or "imported"
    cleaned = "".join(c.lower() if c.isalnum() else "_" for c in stem).strip("_")
    return cleaned or "imported"


def check_loads(folder: Path) -> None:
    """Load the written pipeline and run it on one pair (so a directory that
    does not load is never moved into place)."""
    import spacy
    from .pair_doc import make_pair_doc

    nlp = spacy.load(folder)
    nlp(make_pair_doc(nlp, "We won the game.", "You won it?"))

