"""The pair-aware transformer model for spacy-transformers.

``PairTransformerModel`` is spacy-transformers' ``TransformerModel`` whose
forward pass encodes each pair Doc's two turns as one text pair
(``plan.py``, with windows for long pairs) and runs the
transformer in sub-batches (``batching.py``). Its output is an ordinary
``FullTransformerBatch`` that also records the cut tokens per Doc, so the
stock ``transformer`` component, its listeners, training and serialization
all work unchanged. Tokens without pieces: README, "What the component writes".
"""
import copy
import warnings
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

import numpy
from . import lean_imports  # noqa: F401  (first: transformers without scikit-learn and scipy)
import torch
from thinc.api import Model, torch2xp
from spacy.tokens import Doc
from spacy.util import SimpleFrozenDict
from spacy_transformers.data_classes import FullTransformerBatch, TransformerData, WordpieceBatch
from spacy_transformers.data_classes import HFObjects
from spacy_transformers.layers._util import replace_listener, replace_listener_cfg
from spacy_transformers.layers.transformer_model import TransformerModel, set_pytorch_transformer
from spacy_transformers.layers.transformer_model import _convert_transformer_inputs as convert_transformer_inputs
from spacy_transformers.layers.transformer_model import _convert_transformer_outputs as convert_transformer_outputs
from thinc.layers.pytorchwrapper import forward as pt_forward
from spacy_transformers.util import get_torch_default_device
from transformers import AutoConfig, AutoModel, AutoTokenizer
from transformers.file_utils import ModelOutput

from ..backbones.resolve import BackboneNotFound, resolve_backbone
from ..config_attrs import from_config
from ..backbones.resolve import hub_cached_folder, weights_sha256
from ..pair_doc import get_turns
from .batching import DEFAULT_MAX_PADDING, run_transformer
from .plan import PaddedPieces, check_long_pairs, check_token_types, encode_pairs, padded_pieces
from .shim import PairHFShim, limit_threads_in_worker

DEFAULT_MAX_LENGTH = 512
# A pair the authors' inference would encode whole (a tokenizer with no limit
# on a relative-attention model) is one sequence up to this many pieces and
# windowed past it: a guard against the memory of attention over absurd turns
# (docs/paper-model.md, "Long turns").
DEFAULT_PIECE_LIMIT = 2048


class TruncationWarning(UserWarning):
    """Some tokens of a batch got no wordpiece: each was longer than a whole
    window of the transformer."""


@dataclass
class PairTransformerBatch(FullTransformerBatch):
    """A FullTransformerBatch that also records, per Doc, which tokens were cut
    because the pair exceeded the model's maximum length."""

    cut_tokens: Optional[List[numpy.ndarray]] = None
    first_piece: Optional[numpy.ndarray] = None  # per token of the batch (plan.PairPlan)

    def split_by_doc(self) -> List[TransformerData]:
        """spacy-transformers' ``split_by_doc`` for whole-Doc spans: each Doc's
        rows, alignment and outputs, its token range found from the Docs'
        lengths (the stock method visits every token of every span)."""
        xp_output = ModelOutput()
        n_rows = self.model_output.last_hidden_state.shape[0]
        for key, output in self.model_output.items():
            if isinstance(output, torch.Tensor):
                xp_output[key] = torch2xp(output)
            elif isinstance(output, tuple) and all(
                isinstance(t, torch.Tensor) and t.shape[0] == n_rows for t in output
            ):
                xp_output[key] = [torch2xp(t) for t in output]
        row_length = self.wordpieces.input_ids.shape[1] if len(self.wordpieces.input_ids.shape) > 1 else 0
        outputs = []
        row = token = 0
        for i, doc_spans in enumerate(self.spans):
            if not doc_spans or len(doc_spans[0]) == 0:
                outputs.append(TransformerData.empty())
                continue
            n_tokens = len(doc_spans[0].doc)
            end = row + len(doc_spans)
            doc_align = self.align[token : token + n_tokens]
            doc_align.data = doc_align.data - row * row_length
            model_output = ModelOutput()
            for key, output in xp_output.items():
                model_output[key] = output[row:end] if not isinstance(output, list) else [t[row:end] for t in output]
            data = TransformerData(wordpieces=self.wordpieces[row:end], model_output=model_output, align=doc_align)
            if self.cut_tokens is not None:
                data.cut_tokens = self.cut_tokens[i]  # type: ignore[attr-defined]
            if self.first_piece is not None:
                first = self.first_piece[token : token + n_tokens]
                data.first_piece = numpy.where(first >= 0, first - row * row_length, -1)  # type: ignore[attr-defined]
            outputs.append(data)
            row, token = end, token + n_tokens
        return outputs


def whole_doc_spans(docs: List[Doc]):
    return [[doc[:]] for doc in docs]


class PairTransformerModel(TransformerModel):
    """spacy-transformers' TransformerModel (its properties and serialization),
    composed of this package's forward pass (``pair_forward``: each pair Doc's
    two turns encoded as one text pair), its init (``pair_init``) and a torch
    layer running on a ``PairHFShim``.

    ``planned``: tokenize-and-align plans made ahead of the forward pass
    (``plan_ahead``), keyed by the batch's Docs, so that the CPU prepares the
    next batch while the device runs this one (``spacy_paraphrase/pipe_by_length.py``)."""

    def __init__(
        self,
        name: str,
        *,
        tokenizer_config: dict = SimpleFrozenDict(),
        transformer_config: dict = SimpleFrozenDict(),
        mixed_precision: bool = False,
        grad_scaler_config: dict = SimpleFrozenDict(),
        max_length: int = 0,
        max_padding: float = DEFAULT_MAX_PADDING,
        long_pairs: str = "windows",
        token_types: str = "pair",
        piece_limit: int = DEFAULT_PIECE_LIMIT,
    ):
        check_long_pairs(long_pairs)
        check_token_types(token_types)
        tokenizer_config = dict(tokenizer_config)
        tokenizer_config.setdefault("use_fast", True)
        # The weights come in pair_init: the HF objects are empty until then.
        hf_objects = HFObjects(None, None, None, tokenizer_config, dict(transformer_config))
        wrapper = Model(
            "hf-pytorch",
            pt_forward,
            attrs={"convert_inputs": convert_transformer_inputs, "convert_outputs": convert_transformer_outputs},
            shims=[PairHFShim(hf_objects, mixed_precision=mixed_precision,
                              grad_scaler_config=dict(grad_scaler_config))],
            dims={"nI": None, "nO": None},
        )
        init_args = dict(
            tokenizer_config=tokenizer_config,
            transformer_config=dict(transformer_config),
            mixed_precision=mixed_precision,
            grad_scaler_config=dict(grad_scaler_config),
            max_length=max_length,
            max_padding=max_padding,
            long_pairs=long_pairs,
            token_types=token_types,
            piece_limit=piece_limit,
        )
        Model.__init__(
            self,
            "transformer",
            pair_forward,
            init=pair_init,
            layers=[wrapper],
            dims={"nO": None},
            attrs={
                "get_spans": whole_doc_spans,
                "name": name,
                "set_transformer": set_pytorch_transformer,
                "has_transformer": False,
                "flush_cache_chance": 0.0,
                "replace_listener": replace_listener,
                "replace_listener_cfg": replace_listener_cfg,
                # the config decides these, also when a saved pipeline loads (config_attrs.py)
                "max_length": from_config(int(max_length)),
                "max_padding": from_config(float(max_padding)),
                "long_pairs": from_config(long_pairs),
                "token_types": from_config(token_types),
                "piece_limit": from_config(int(piece_limit)),
                "init_args": init_args,
            },
        )
        self.planned: Dict[Tuple[int, ...], Future] = {}

    def copy(self):
        args = dict(self.attrs["init_args"])
        args.update({key: self.attrs[key] for key in ("max_length", "max_padding", "long_pairs", "token_types",
                                                      "piece_limit")})
        copied = PairTransformerModel(self.attrs["name"], **args)
        params = {}
        for pname in self.param_names:
            params[pname] = self.get_param(pname) if self.has_param(pname) else None
        copied.params = copy.deepcopy(params)
        copied.dims = copy.deepcopy(self._dims)
        copied.layers[0] = copy.deepcopy(self.layers[0])
        for gname in self.grad_names:
            copied.set_grad(gname, self.get_grad(gname).copy())
        copied.attrs["has_transformer"] = self.attrs["has_transformer"]
        if "backbone" in self.attrs:
            copied.attrs["backbone"] = dict(self.attrs["backbone"])
        return copied


def get_max_length(model: PairTransformerModel) -> int:
    """The most wordpieces one sequence of a pair may have: the configured
    ``max_length`` when set; else the tokenizer's ``model_max_length`` (what
    ``truncation=True`` cuts at) and the model's absolute positions, the
    smaller. A tokenizer with no limit (transformers' "no limit" sentinel, as
    a DeBERTa-v3 tokenizer is saved) on a model with no absolute positions
    (DeBERTa-v3: relative attention only) cuts nothing: with
    ``long_pairs = "truncate"`` (the authors' inference) a pair is then one
    sequence up to ``piece_limit`` pieces, and windowed past it
    (``long_pairs_rule``); with "windows" the limit is 512, as before."""
    configured = model.attrs.get("max_length") or 0
    if configured > 0:
        return int(configured)
    limits = [x for x in (tokenizer_limit(model.tokenizer), absolute_positions(model.transformer.config)) if x]
    if limits:
        return int(min(limits))
    if model.attrs.get("long_pairs") == "truncate":
        return int(model.attrs.get("piece_limit") or DEFAULT_PIECE_LIMIT)
    return DEFAULT_MAX_LENGTH


def long_pairs_rule(model: PairTransformerModel) -> str:
    """How a pair over ``get_max_length`` pieces is encoded: the configured
    ``long_pairs``, except that "truncate" with nothing to truncate at (no
    tokenizer limit, no absolute positions: the authors' tokenizer cuts
    nothing) windows a pair past ``piece_limit`` instead of cutting it."""
    rule = model.attrs.get("long_pairs", "windows")
    if rule == "truncate" and not (model.attrs.get("max_length") or 0) and not (
            tokenizer_limit(model.tokenizer) or absolute_positions(model.transformer.config)):
        return "windows"
    return rule


def tokenizer_limit(tokenizer) -> Optional[int]:
    """The tokenizer's ``model_max_length``; None for none or the "no limit" sentinel."""
    limit = getattr(tokenizer, "model_max_length", None)
    return int(limit) if limit and limit <= 100_000 else None


def absolute_positions(config) -> Optional[int]:
    """How many absolute positions the model embeds (``max_position_embeddings``);
    None when it embeds none (DeBERTa-v2/v3 with ``position_biased_input`` false)."""
    if getattr(config, "position_biased_input", True) is False:
        return None
    positions = getattr(config, "max_position_embeddings", None)
    return int(positions) if positions and positions > 0 else None


def _check_fast(tokenizer) -> None:
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(
            f"spacy-paraphrase needs a fast (Rust) tokenizer with offset mappings; "
            f"got {type(tokenizer).__name__}. Set tokenizer_config.use_fast = true, "
            "and for DeBERTa-v3 install the extras: pip install 'spacy-paraphrase[deberta]'."
        )


def to_wordpieces(pieces: PaddedPieces) -> WordpieceBatch:
    """The plan's padded rows as spacy-transformers' WordpieceBatch."""
    return WordpieceBatch(
        strings=pieces.strings,
        input_ids=pieces.input_ids,
        attention_mask=pieces.attention_mask,
        lengths=pieces.lengths,
        token_type_ids=pieces.token_type_ids,
    )


def load_pretrained(source: str, tok_config: Dict, trf_config: Dict) -> HFObjects:
    """spacy-transformers' ``huggingface_from_pretrained`` for folders whose
    fast tokenizer has no separate vocabulary file (only ``tokenizer.json``,
    as the offline multilingual-e5-small build): spacy-transformers saves and
    loads a tokenizer's ``vocab_file`` whenever the attribute exists, and
    ``XLMRobertaTokenizerFast`` sets it to None then. Such a tokenizer is
    serialized with an empty vocabulary file, which the fast tokenizer
    (read from its ``tokenizer.json``) never uses."""
    tokenizer = AutoTokenizer.from_pretrained(source, **tok_config)
    config = AutoConfig.from_pretrained(source, **dict(trf_config, return_dict=True))
    transformer = AutoModel.from_pretrained(source, config=config)
    transformer.to(get_torch_default_device())
    return HFObjects(tokenizer, transformer, vocab_file_contents(tokenizer))


def vocab_file_contents(tokenizer) -> Optional[bytes]:
    """What spacy-transformers saves as the tokenizer's vocabulary file (b""
    for a fast tokenizer without one: ``load_pretrained``)."""
    if not hasattr(tokenizer, "vocab_file"):
        return None
    if tokenizer.vocab_file is None:
        return b""
    with open(tokenizer.vocab_file, "rb") as fileh:
        return fileh.read()


def pair_init(model: PairTransformerModel, X=None, Y=None) -> None:
    if model.attrs["has_transformer"]:
        return
    name = model.attrs["name"]
    try:
        backbone = resolve_backbone(name)
    except BackboneNotFound as err:
        raise OSError(str(err)) from err
    source = backbone.location
    try:
        hf_model = load_pretrained(
            source, model._init_tokenizer_config, model._init_transformer_config
        )
    except (OSError, ValueError) as err:
        raise OSError(
            f"Could not load the transformer '{name}' ({backbone.source}, '{source}'): {err}"
        ) from err
    if backbone.source == "hub" and backbone.sha256 is None:
        cached = hub_cached_folder(name)
        backbone.sha256 = weights_sha256(cached) if cached is not None else None
    # Where the weights came from: kept with the model (serialized with it)
    # and written into the trained pipeline's meta (backbones.resolve.record_backbone).
    model.attrs["backbone"] = backbone.meta()
    attach_transformer(model, hf_model)


def attach_transformer(model: PairTransformerModel, hf_model: HFObjects) -> None:
    """Give ``model`` its Hugging Face tokenizer and module (loaded by
    ``pair_init``, or handed over by ``import-model``) and initialize its torch
    layer; ``nlp.initialize`` then leaves the transformer as it is."""
    _check_fast(hf_model.tokenizer)
    model.attrs["set_transformer"](model, hf_model)
    encoding = model.tokenizer(
        ["hello world"], ["hello"], return_tensors="np", return_attention_mask=True
    )
    model.layers[0].initialize(X=to_wordpieces(padded_pieces(model.tokenizer, encoding)))


def batch_key(docs: List[Doc]) -> Tuple[int, ...]:
    """Which batch a plan made ahead is for: its Docs (alive while planned)."""
    return tuple(id(doc) for doc in docs)


def plan_ahead(model: PairTransformerModel, docs: List[Doc], executor: Executor) -> None:
    """Start the tokenize-and-align plan of ``docs`` on ``executor``; the
    forward pass over the same Docs waits for it instead of planning itself."""
    model.planned[batch_key(docs)] = executor.submit(plan_batch, model, docs)


def plan_batch(model: PairTransformerModel, docs: List[Doc]):
    """The tokenize-and-align plan of ``docs`` with the model's settings
    (``max_length``, ``long_pairs``, ``token_types``; ``plan.encode_pairs``)."""
    return encode_pairs(model.tokenizer, docs, get_max_length(model), long_pairs=long_pairs_rule(model),
                        token_types=model.attrs.get("token_types", "pair"))


def pair_forward(
    model: PairTransformerModel, docs: List[Doc], is_train: bool
) -> Tuple[FullTransformerBatch, Callable]:
    limit_threads_in_worker()
    if not docs:
        return FullTransformerBatch.empty(0), lambda d: docs
    _check_fast(model.tokenizer)
    max_length = get_max_length(model)
    future = model.planned.pop(batch_key(docs), None) if isinstance(model, PairTransformerModel) else None
    plan = future.result() if future is not None else plan_batch(model, docs)
    n_cut = sum(1 for cut in plan.cut_tokens if cut.any())
    if n_cut:
        why = (f"are longer than the transformer's {max_length} wordpieces and long_pairs = 'truncate' "
               "cut them at the end" if long_pairs_rule(model) == "truncate" else
               f"have a token longer than a whole window of the transformer ({max_length} wordpieces)")
        warnings.warn(
            f"{n_cut} of {len(docs)} pair Docs in this batch {why}; the pieces that "
            "did not fit were cut and tokens left without any get no probability "
            "(attrs['truncated'] is True on their paraphrase span group).",
            TruncationWarning,
        )
    wordpieces = to_wordpieces(plan.pieces)
    model_output, bp_tensors = run_transformer(
        model.layers[0], wordpieces, is_train, model.attrs.get("max_padding", DEFAULT_MAX_PADDING)
    )
    output = PairTransformerBatch(
        spans=[[doc[:]] * n for doc, n in zip(docs, plan.windows_per_doc)],
        wordpieces=wordpieces,
        model_output=model_output,
        align=plan.align,
        cut_tokens=plan.cut_tokens,
        first_piece=plan.first_piece,
    )

    def backprop(d_output: FullTransformerBatch) -> List[Doc]:
        bp_tensors(d_output.model_output)
        return docs

    return output, backprop


def check_transformer_output(docs: List[Doc], trf_datas: List[TransformerData], who: str) -> None:
    """Check that downstream layer ``who`` got pair-transformer output for
    each of its pair Docs (not a stock transformer's, not a disabled one's)."""
    if len(trf_datas) != len(docs):
        raise ValueError(f"Got transformer output for {len(trf_datas)} Docs, expected {len(docs)}.")
    for doc, data in zip(docs, trf_datas):
        get_turns(doc)
        if getattr(data, "cut_tokens", None) is None:
            raise ValueError(
                f"The {who} got transformer output that was not made by "
                "spacy_paraphrase's pair-aware transformer for this Doc. Use "
                "'spacy_paraphrase.PairTransformerModel.v1' in the transformer "
                "component and do not disable it when running the pipeline."
            )
        if int(data.align.lengths.shape[0]) != len(doc):
            raise ValueError(
                f"Transformer alignment covers {data.align.lengths.shape[0]} tokens "
                f"but the Doc has {len(doc)}."
            )


def tok2vec_width(tok2vec: Model) -> int:
    """The output width of a transformer (the first ``nO`` found in it)."""
    for node in tok2vec.walk():
        if node.has_dim("nO") is True:
            return node.get_dim("nO")
    raise ValueError(
        "Cannot infer the transformer's width: initialize the transformer "
        "component before the component that listens to it (it must come first in the pipeline)."
    )
