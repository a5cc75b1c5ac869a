"""The ``pair_transformer`` component: spacy-transformers' ``transformer``
component whose saved pipeline keeps the transformer's weights in a
safetensors file, loaded in the memory of the weights.

The stock component writes its model as one msgpack blob holding a
``torch.save`` of the weights; loading it reads the file, unpacks the blob
twice, copies it into a BytesIO, ``torch.load``s it and copies that into a
randomly initialized model: about five copies of the weights at the peak
(9 GB for DeBERTa-v3-large's 1.74 GB). This component writes two files in
its folder:

- ``model``: the thinc model's bytes without the weights (config, tokenizer
  files, settings: kilobytes to megabytes);
- ``model.safetensors`` (``weights_file.WEIGHTS_FILE``): the weights.

``from_disk`` builds the Hugging Face module without weights and reads each
tensor into it (``weights_file.load_weights``). A folder saved by the stock
component (no ``model.safetensors``: pipelines saved before, or with
``factory = "transformer"``) loads the stock way. Everything else (listeners,
training, ``nlp.to_bytes``) is spacy-transformers' own. A quantized module
keeps its int8 weights in the ``model`` bytes, as before.
"""
from pathlib import Path
from typing import Callable, Iterable, List, Union

import srsly
from spacy import util
from spacy.language import Language
from spacy.pipeline.pipe import deserialize_config
from spacy.tokens import Doc
from . import lean_imports  # noqa: F401  (first: transformers without scikit-learn and scipy)
from spacy_transformers.data_classes import FullTransformerBatch
from spacy_transformers.pipeline_component import DOC_EXT_ATTR, Transformer
from thinc.api import Config, Model

from .shim import pair_shims
from .weights_file import WEIGHTS_FILE, read_index, save_weights

DEFAULT_CONFIG_STR = """
[pair_transformer]
max_batch_items = 4096

[pair_transformer.set_extra_annotations]
@annotation_setters = "spacy-transformers.null_annotation_setter.v1"

[pair_transformer.model]
@architectures = "spacy_paraphrase.PairTransformerModel.v1"
name = "sentence-transformers/all-MiniLM-L6-v2"
tokenizer_config = {"use_fast": true}
"""
DEFAULT_CONFIG = Config().from_str(DEFAULT_CONFIG_STR)


@Language.factory("pair_transformer", assigns=[f"doc._.{DOC_EXT_ATTR}"], default_config=DEFAULT_CONFIG["pair_transformer"])
def make_pair_transformer(nlp: Language, name: str, model: Model[List[Doc], FullTransformerBatch],
                          set_extra_annotations: Callable, max_batch_items: int) -> "PairTransformer":
    """spacy-transformers' ``transformer`` component (same settings; the model
    is usually ``spacy_paraphrase.PairTransformerModel.v1``) that saves its
    weights as safetensors and loads them without copies (module doc)."""
    return PairTransformer(nlp.vocab, model, set_extra_annotations, max_batch_items=max_batch_items, name=name)


class PairTransformer(Transformer):
    """``Transformer`` with the weights in ``model.safetensors`` (module doc)."""

    def to_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()) -> None:
        shims = pair_shims(self.model)

        def write_model(p: Path) -> None:
            for shim in shims:
                shim.leave_out_weights = True
            apart = [shim for shim in shims if shim.stores_weights_apart()]
            if len(apart) != 1:  # one file holds one module's weights
                apart = []
                for shim in shims:
                    shim.leave_out_weights = False
            try:
                Path(p).write_bytes(self.model.to_bytes())
            finally:
                for shim in shims:
                    shim.leave_out_weights = False
            weights = Path(p).with_name(WEIGHTS_FILE)
            if apart:
                save_weights(apart[0]._model, weights, metadata={"format": "pt"})
            elif weights.exists():
                weights.unlink()  # a stale file from an earlier save into this folder

        serialize = {
            "cfg": lambda p: srsly.write_json(p, self.cfg),
            "vocab": lambda p: self.vocab.to_disk(p),
            "model": write_model,
        }
        util.to_disk(path, serialize, exclude)

    def from_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()) -> "PairTransformer":
        weights = Path(path) / WEIGHTS_FILE
        if not weights.is_file():
            return super().from_disk(path, exclude=exclude)  # saved by the stock component
        shims = pair_shims(self.model)

        def load_model(p: Path) -> None:
            index = read_index([weights])
            for shim in shims:
                shim.weights_index = index
            try:
                self.model.from_bytes(Path(p).read_bytes())
            finally:
                for shim in shims:
                    shim.weights_index = None

        deserialize = {
            "vocab": self.vocab.from_disk,
            "cfg": lambda p: self.cfg.update(deserialize_config(p)),
            "model": load_model,
        }
        util.from_disk(path, deserialize, exclude)
        return self

