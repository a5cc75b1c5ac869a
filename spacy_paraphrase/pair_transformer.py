"""A pair-aware transformer for spacy-transformers.

The two turns of a pair Doc (see ``pair_doc.py``) are encoded as one real text
pair, ``[CLS] first [SEP] second [SEP]`` (the tokenizer's ``text_pair``, with
``token_type_ids`` where the model has them). Wordpieces are aligned back to the
Doc's tokens by character offsets (``encoder/plan.py``, ``encoder/alignment.py``), and the output is an
ordinary spacy-transformers ``FullTransformerBatch``, so the stock
``transformer`` component, its listeners, training and serialization all work
unchanged.

Long pairs: a pair with more wordpieces than the model's maximum length is
encoded as several sequences (windows): the longer turn is cut into
overlapping windows of whole tokens, each encoded against the whole other turn
(or, when both turns are long, against the matching window of the other turn).
Every token of both turns is in at least one window; a token in several
windows is aligned to its pieces in all of them, so its pooled vector is the
mean over those windows. Only a single token longer than a whole window can
still lose pieces; tokens left with none are *cut*: the batch records them per
Doc (``TransformerData.cut_tokens``), downstream components give them no
probability, and a ``TruncationWarning`` says how many Docs were affected.
"""
import contextlib
import copy
import multiprocessing
import os
import types
import warnings
from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

import numpy
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model, chain
from spacy_transformers.data_classes import FullTransformerBatch, TransformerData, WordpieceBatch
from spacy_transformers.layers import TransformerListener, split_trf_batch
from spacy_transformers.layers.transformer_model import (
    TransformerModel,
    huggingface_from_pretrained,
)


from .backbones import missing_backbone_hint, resolve_model_name
from .encoder.plan import PaddedPieces, encode_pairs, padded_pieces
from .encoder.windows import pair_windows, token_windows  # noqa: F401  (moved; re-exported)
from .pair_doc import get_turns

DEFAULT_MAX_LENGTH = 512
# Sequences of a batch are run through the transformer in sub-batches of
# similar length, so that padding is at most this share of a sub-batch's
# pieces (see ``padding_groups``). 1.0 = the whole batch in one forward pass.
DEFAULT_MAX_PADDING = 0.1
# ... but a sub-batch is not closed before it holds this many padded pieces:
# tiny forward passes cost more in per-call overhead than padding saves.
MIN_GROUP_PIECES = 256


class TruncationWarning(UserWarning):
    pass


@dataclass
class PairTransformerBatch(FullTransformerBatch):
    """A FullTransformerBatch that also records, per Doc, which tokens were cut
    because the pair exceeded the model's maximum length."""

    cut_tokens: Optional[List[numpy.ndarray]] = None

    def split_by_doc(self) -> List[TransformerData]:
        outputs = super().split_by_doc()
        if self.cut_tokens is not None:
            for data, cut in zip(outputs, self.cut_tokens):
                data.cut_tokens = cut  # type: ignore[attr-defined]
        return outputs


def whole_doc_spans(docs):
    return [[doc[:]] for doc in docs]


class PairTransformerModel(TransformerModel):
    """spacy-transformers' TransformerModel, encoding each pair Doc's two turns
    as one text pair."""

    def __init__(
        self,
        name: str,
        *,
        tokenizer_config: dict = {},
        transformer_config: dict = {},
        mixed_precision: bool = False,
        grad_scaler_config: dict = {},
        max_length: int = 0,
        max_padding: float = DEFAULT_MAX_PADDING,
    ):
        tokenizer_config = dict(tokenizer_config)
        tokenizer_config.setdefault("use_fast", True)
        super().__init__(
            name,
            whole_doc_spans,
            tokenizer_config=tokenizer_config,
            transformer_config=dict(transformer_config),
            mixed_precision=mixed_precision,
            grad_scaler_config=dict(grad_scaler_config),
        )
        setattr(self, "_func", pair_forward)
        setattr(self, "init", pair_init)
        self.attrs["max_length"] = max_length
        self.attrs["max_padding"] = float(max_padding)
        self.attrs["init_args"] = dict(
            tokenizer_config=tokenizer_config,
            transformer_config=dict(transformer_config),
            mixed_precision=mixed_precision,
            grad_scaler_config=dict(grad_scaler_config),
            max_length=max_length,
            max_padding=max_padding,
        )

    def copy(self):
        copied = PairTransformerModel(self.attrs["name"], **self.attrs["init_args"])
        params = {}
        for pname in self.param_names:
            params[pname] = self.get_param(pname) if self.has_param(pname) else None
        copied.params = copy.deepcopy(params)
        copied.dims = copy.deepcopy(self._dims)
        copied.layers[0] = copy.deepcopy(self.layers[0])
        for gname in self.grad_names:
            copied.set_grad(gname, self.get_grad(gname).copy())
        copied.attrs["has_transformer"] = self.attrs["has_transformer"]
        return copied


def get_max_length(model: PairTransformerModel) -> int:
    """The most wordpieces one pair may have: the configured ``max_length`` when
    set, else the smaller of the tokenizer's and the model's limits."""
    configured = model.attrs.get("max_length") or 0
    if configured > 0:
        return int(configured)
    limit = getattr(model.tokenizer, "model_max_length", None) or DEFAULT_MAX_LENGTH
    if limit > 100_000:  # "no limit" sentinel of some tokenizers
        limit = DEFAULT_MAX_LENGTH
    positions = getattr(model.transformer.config, "max_position_embeddings", None)
    if positions and positions > 0:
        limit = min(limit, positions)
    return int(limit)


def _check_fast(tokenizer) -> None:
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(
            f"spacy-paraphrase needs a fast (Rust) tokenizer with offset mappings; "
            f"got {type(tokenizer).__name__}. Set tokenizer_config.use_fast = true, "
            "and for DeBERTa-v3 install the extras: pip install 'spacy-paraphrase[deberta]'."
        )


def pair_init(model: PairTransformerModel, X=None, Y=None) -> None:
    if model.attrs["has_transformer"]:
        return
    name = model.attrs["name"]
    source = resolve_model_name(name)
    try:
        hf_model = huggingface_from_pretrained(
            source, model._init_tokenizer_config, model._init_transformer_config
        )
    except (OSError, ValueError) as err:
        raise OSError(
            f"Could not load the transformer '{name}' (from '{source}'): {err}\n"
            + missing_backbone_hint(name)
        ) from err
    _check_fast(hf_model.tokenizer)
    model.attrs["set_transformer"](model, hf_model)
    encoding = model.tokenizer(
        ["hello world"], ["hello"], return_tensors="np", return_attention_mask=True
    )
    model.layers[0].initialize(X=to_wordpieces(padded_pieces(model.tokenizer, encoding)))


def to_wordpieces(pieces: PaddedPieces) -> WordpieceBatch:
    """The plan's padded rows as spacy-transformers' WordpieceBatch."""
    return WordpieceBatch(
        strings=pieces.strings,
        input_ids=pieces.input_ids,
        attention_mask=pieces.attention_mask,
        lengths=pieces.lengths,
        token_type_ids=pieces.token_type_ids,
    )


_THREADS_CHECKED_PID: Optional[int] = None


def limit_threads_in_worker() -> None:
    """In a worker process (``nlp.pipe(n_process=...)`` forks on Linux), use
    one torch thread: torch's thread pool does not survive a fork and would
    hang. Runs once per process."""
    global _THREADS_CHECKED_PID
    pid = os.getpid()
    if _THREADS_CHECKED_PID == pid:
        return
    _THREADS_CHECKED_PID = pid
    if multiprocessing.parent_process() is not None:
        import torch

        torch.set_num_threads(1)


def padding_groups(lengths, max_padding: float, min_pieces: Optional[int] = None) -> List[numpy.ndarray]:
    """Split the rows of a padded batch into sub-batches of similar length.

    Rows are taken longest first; a sub-batch grows while its padding (pieces
    beyond each row's own length, up to the sub-batch's longest row) stays
    within ``max_padding`` of its padded size, or while it is still smaller
    than ``min_pieces`` padded pieces. Returns arrays of row indices (each
    sorted ascending) that together hold every row once. ``max_padding >= 1``
    gives one group: the whole batch."""
    if min_pieces is None:
        min_pieces = MIN_GROUP_PIECES
    lengths = numpy.asarray(lengths, dtype="int64")
    n = len(lengths)
    if n == 0:
        return []
    if max_padding >= 1.0 or n == 1:
        return [numpy.arange(n)]
    order = numpy.argsort(-lengths, kind="stable")
    groups: List[List[int]] = []
    current: List[int] = []
    longest = total = 0
    for i in order:
        length = int(lengths[i])
        if current:
            padded = longest * (len(current) + 1)
            waste = 1.0 - (total + length) / max(padded, 1)
            if waste > max_padding and longest * len(current) >= min_pieces:
                groups.append(current)
                current, total = [], 0
        if not current:
            longest = length
        current.append(int(i))
        total += length
    groups.append(current)
    return [numpy.asarray(sorted(g), dtype="int64") for g in groups]


def _extra_outputs(transformer: Model) -> bool:
    """Whether the HF model returns more than last_hidden_state / pooler_output
    (per-layer hidden states or attentions, set in its config): those are
    tuples of layers, kept exact by a single forward pass instead of being
    reassembled from sub-batches."""
    for shim in transformer.shims:
        config = getattr(getattr(shim, "_model", None), "config", None)
        if config is not None and (getattr(config, "output_hidden_states", False) or getattr(config, "output_attentions", False)):
            return True
    return False


def run_transformer(transformer: Model, wordpieces: WordpieceBatch, is_train: bool, max_padding: float):
    """Run the HF transformer layer on a padded WordpieceBatch, in sub-batches
    of similar length (``padding_groups``) to avoid computing on padding.

    The outputs are put back together in the batch's own padded shape, so the
    alignment and every caller see exactly what one forward pass would give
    (up to float rounding) at every real piece; padding positions hold no
    meaningful values, as with one pass. The backward pass
    sends each sub-batch its own slice of the gradient."""
    groups = padding_groups(wordpieces.lengths, max_padding)
    if len(groups) <= 1 or _extra_outputs(transformer):
        return transformer(wordpieces, is_train)
    import torch

    results = []
    for idx in groups:
        width = int(max(wordpieces.lengths[i] for i in idx))
        sub = WordpieceBatch(
            strings=[],  # not read by the transformer layer
            input_ids=numpy.ascontiguousarray(wordpieces.input_ids[idx, :width]),
            attention_mask=numpy.ascontiguousarray(wordpieces.attention_mask[idx, :width]),
            lengths=[wordpieces.lengths[i] for i in idx],
            token_type_ids=(
                numpy.ascontiguousarray(wordpieces.token_type_ids[idx, :width])
                if wordpieces.token_type_ids is not None
                else None
            ),
        )
        results.append((idx, width) + tuple(transformer(sub, is_train)))
    first = results[0][2]
    n_rows, row_length = wordpieces.input_ids.shape
    combined = {}
    with torch.no_grad():
        for key in first.keys():
            ref = first[key]
            if key == "last_hidden_state":
                full = ref.new_zeros((n_rows, row_length) + tuple(ref.shape[2:]))
                for idx, width, out, _ in results:
                    full[torch.as_tensor(idx, device=ref.device), :width] = out[key].detach()
            else:
                full = ref.new_zeros((n_rows,) + tuple(ref.shape[1:]))
                for idx, width, out, _ in results:
                    full[torch.as_tensor(idx, device=ref.device)] = out[key].detach()
            combined[key] = full
    model_output = type(first)(**combined)

    def backprop(d_output):
        d_hidden = d_output["last_hidden_state"] if "last_hidden_state" in d_output else d_output[0]
        for idx, width, out, bp in results:
            rows = torch.as_tensor(idx, device=d_hidden.device)
            bp(type(out)(last_hidden_state=d_hidden[rows, :width].contiguous()))
        return None

    return model_output, backprop


def _predict_without_mode_toggles(self, inputs):
    """thinc's ``PyTorchShim.predict``, but the torch module is switched to
    eval mode only when it is not in it already, and not switched back to
    train mode afterwards (``begin_update`` does that itself before every
    training pass). ``Module.eval()``/``.train()`` walk every submodule: for
    small batches the two walks per call cost ~9% of the time."""
    import torch

    if self._model.training:
        self._model.eval()
    with torch.no_grad():
        with torch.autocast(device_type="cuda", enabled=self._mixed_precision):
            return self._model(*inputs.args, **inputs.kwargs)


@contextlib.contextmanager
def _use_params_with_optimizer_keys(self, params):
    """thinc's ``PyTorchShim.use_params``, but it also finds the parameters
    under the keys the optimizer uses. ``PyTorchShim.finish_update`` hands
    thinc's optimizer ``(shim.id, name)`` keys, so ``optimizer.averages``
    (``[training.optimizer] use_averages = true``) holds the transformer's
    averaged weights under those keys, while the stock ``use_params`` only
    looks for ``"pytorch_<id>_<name>"`` strings: the averages were silently
    never used, in evaluation or in the saved ``model-best``/``model-last``.
    Both key forms are accepted; parameters without an entry keep their
    current values."""
    from thinc.api import xp2torch

    prefix = f"pytorch_{self.id}_"
    state = {}
    for key, value in params.items():
        if isinstance(key, tuple) and len(key) == 2 and key[0] == self.id:
            state[key[1]] = value
        elif isinstance(key, str) and key.startswith(prefix):
            state[key[len(prefix):]] = value
    if not state:
        yield
        return
    backup = {k: v.clone() for k, v in self._model.state_dict().items()}
    self._model.load_state_dict(
        {k: xp2torch(v, device=self.device) for k, v in state.items()}, strict=False
    )
    try:
        yield
    finally:
        self._model.load_state_dict(backup)


def _patch_shims(transformer: Model) -> None:
    """Swap in the shim methods above (once per shim)."""
    for shim in transformer.shims:
        if not getattr(shim, "_pair_shim_patched", False) and hasattr(shim, "_model"):
            shim.predict = types.MethodType(_predict_without_mode_toggles, shim)
            shim.use_params = types.MethodType(_use_params_with_optimizer_keys, shim)
            shim._pair_shim_patched = True


def pair_forward(
    model: PairTransformerModel, docs: List[Doc], is_train: bool
) -> Tuple[FullTransformerBatch, Callable]:
    limit_threads_in_worker()
    if not docs:
        return FullTransformerBatch.empty(0), lambda d: docs
    _check_fast(model.tokenizer)
    max_length = get_max_length(model)
    plan = encode_pairs(model.tokenizer, docs, max_length)
    wordpieces, align, cut_tokens, rows = to_wordpieces(plan.pieces), plan.align, plan.cut_tokens, plan.rows
    n_cut = sum(1 for cut in cut_tokens if cut.any())
    if n_cut:
        warnings.warn(
            f"{n_cut} of {len(docs)} pair Docs in this batch have a token longer than a "
            f"whole window of the transformer ({max_length} wordpieces); the pieces that "
            "did not fit were cut and tokens left without any get no probability "
            "(attrs['truncated'] is True on their paraphrase span group).",
            TruncationWarning,
        )
    transformer = model.layers[0]
    _patch_shims(transformer)
    model_output, bp_tensors = run_transformer(
        transformer, wordpieces, is_train, model.attrs.get("max_padding", DEFAULT_MAX_PADDING)
    )
    output = PairTransformerBatch(
        spans=[[doc[:]] * n for doc, n in zip(docs, rows)],
        wordpieces=wordpieces,
        model_output=model_output,
        align=align,
        cut_tokens=cut_tokens,
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


@registry.architectures("spacy_paraphrase.PairTransformerModel.v1")
def create_pair_transformer_model(
    name: str,
    tokenizer_config: dict = {"use_fast": True},
    transformer_config: dict = {},
    mixed_precision: bool = False,
    grad_scaler_config: dict = {},
    max_length: int = 0,
    max_padding: float = DEFAULT_MAX_PADDING,
) -> Model[List[Doc], FullTransformerBatch]:
    """The pair-aware transformer, for the stock ``transformer`` component.

    name (str): Hugging Face model name or local directory; offline-packaged
        backbones are resolved by ``backbones.resolve_model_name``.
    max_length (int): most wordpieces per pair; 0 = the model's own limit.
    max_padding (float): run each batch in sub-batches of similar length whose
        padding is at most this share of their pieces (1.0 = one forward pass
        per batch, as spacy-transformers does). Same outputs, less compute.
    mixed_precision, grad_scaler_config: as in spacy-transformers (GPU only).
    """
    return PairTransformerModel(
        name,
        tokenizer_config=tokenizer_config,
        transformer_config=transformer_config,
        mixed_precision=mixed_precision,
        grad_scaler_config=grad_scaler_config,
        max_length=max_length,
        max_padding=max_padding,
    )


@registry.architectures("spacy_paraphrase.PairTransformerListener.v1")
def create_pair_listener(upstream: str = "*") -> Model[List[Doc], List[TransformerData]]:
    """Listen to a ``transformer`` component earlier in the pipeline, getting
    its per-Doc ``TransformerData`` (wordpiece vectors, alignment and cut
    tokens) unpooled."""
    return TransformerListener(upstream_name=upstream)


@registry.architectures("spacy_paraphrase.PairTransformer.v1")
def create_inline_pair_transformer(
    name: str,
    tokenizer_config: dict = {"use_fast": True},
    transformer_config: dict = {},
    mixed_precision: bool = False,
    grad_scaler_config: dict = {},
    max_length: int = 0,
    max_padding: float = DEFAULT_MAX_PADDING,
) -> Model[List[Doc], List[TransformerData]]:
    """A pair-aware transformer owned by one component (no sharing), giving
    the same per-Doc ``TransformerData`` as the listener."""
    trf = create_pair_transformer_model(
        name,
        tokenizer_config=tokenizer_config,
        transformer_config=transformer_config,
        mixed_precision=mixed_precision,
        grad_scaler_config=grad_scaler_config,
        max_length=max_length,
        max_padding=max_padding,
    )
    model = chain(trf, split_trf_batch())
    model.set_ref("transformer", trf)
    return model
