"""How a batch of pairs runs through the transformer: on a CPU
(``run_transformer``) the sequences are run in sub-batches of similar length
(``padding_groups``), so that little compute goes to padding; the outputs are
put back into the batch's own padded shape (same outputs as one forward pass)
and each sub-batch gets its slice of the gradient. On a GPU a batch is one
forward pass: many small ones would leave the device waiting. (Across batches,
a component's ``pipe`` sorts by length: ``spacy_paraphrase/pipe_by_length.py``.)
"""
from typing import List, Optional

import numpy
from . import lean_imports  # noqa: F401  (first: transformers without scikit-learn and scipy)
from spacy_transformers.data_classes import WordpieceBatch
from thinc.api import Model

# Padding is at most this share of a sub-batch's pieces (see
# ``padding_groups``). 1.0 = the whole batch in one forward pass.
DEFAULT_MAX_PADDING = 0.1
# ... but a sub-batch is not closed before it holds this many padded pieces:
# tiny forward passes cost more in per-call overhead than padding saves.
MIN_GROUP_PIECES = 256
# A sub-batch's attention, rows x width^2 scores per head, is held a few times
# over in a layer's forward pass (scores, probabilities, and DeBERTa's two
# disentangled terms): a sub-batch is closed before its attention would pass
# this many bytes, so that the activations of long pairs stay bounded (about
# 0.5 GiB at the peak, whatever the batch size; a single longer row runs alone).
ATTENTION_BUDGET_BYTES = 512 * 2 ** 20
ATTENTION_COPIES = 4


def padding_groups(lengths, max_padding: float, min_pieces: Optional[int] = None,
                   max_attention: Optional[int] = None) -> List[numpy.ndarray]:
    """Split the rows of a padded batch into sub-batches of similar length.

    Rows are taken longest first; a sub-batch grows while its padding (pieces
    beyond each row's own length, up to the sub-batch's longest row) stays
    within ``max_padding`` of its padded size, or while it is still smaller
    than ``min_pieces`` padded pieces (default ``MIN_GROUP_PIECES``); and,
    with ``max_attention``, never past ``rows x longest^2 > max_attention``
    (a row alone may pass it). Returns
    arrays of row indices (each sorted ascending) that together hold every
    row once. ``max_padding >= 1`` gives one group: the whole batch."""
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
            too_big = max_attention is not None and (len(current) + 1) * longest * longest > max_attention
            if too_big or (waste > max_padding and longest * len(current) >= min_pieces):
                groups.append(current)
                current, total = [], 0
        if not current:
            longest = length
        current.append(int(i))
        total += length
    groups.append(current)
    return [numpy.asarray(sorted(g), dtype="int64") for g in groups]


def returns_extra_outputs(transformer: Model) -> bool:
    """Whether the HF model returns more than last_hidden_state / pooler_output
    (per-layer hidden states or attentions, set in its config): those are
    tuples of layers, kept exact by a single forward pass instead of being
    reassembled from sub-batches."""
    for shim in transformer.shims:
        config = getattr(getattr(shim, "_model", None), "config", None)
        if config is not None and (
            getattr(config, "output_hidden_states", False) or getattr(config, "output_attentions", False)
        ):
            return True
    return False


def attention_budget(transformer: Model) -> Optional[int]:
    """``padding_groups``' ``max_attention`` for this HF model on a CPU:
    ``ATTENTION_BUDGET_BYTES`` over its heads' float32 copies; None on a GPU
    (one pass per batch) or when the model's heads are unknown."""
    if on_gpu(transformer):
        return None
    for shim in transformer.shims:
        heads = getattr(getattr(getattr(shim, "_model", None), "config", None), "num_attention_heads", None)
        if heads:
            return max(1, ATTENTION_BUDGET_BYTES // (int(heads) * 4 * ATTENTION_COPIES))
    return None


def on_gpu(transformer: Model) -> bool:
    """Whether the HF model of the transformer layer is on a CUDA device."""
    for shim in transformer.shims:
        device = getattr(shim, "device", None)
        if device is not None and getattr(device, "type", "cpu") == "cuda":
            return True
    return False


def sub_batch(wordpieces: WordpieceBatch, idx: numpy.ndarray) -> WordpieceBatch:
    """Rows ``idx`` of a padded batch, cut to their own longest row."""
    width = int(max(wordpieces.lengths[i] for i in idx))
    return WordpieceBatch(
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


def run_transformer(transformer: Model, wordpieces: WordpieceBatch, is_train: bool, max_padding: float):
    """Run the HF transformer layer on a padded WordpieceBatch, on a CPU in
    sub-batches of similar length (``padding_groups``) to avoid computing on
    padding, on a GPU in one pass.

    The outputs are put back together in the batch's own padded shape, so the
    alignment and every caller see exactly what one forward pass would give
    (up to float rounding) at every real piece; padding positions hold no
    meaningful values, as with one pass. The backward pass
    sends each sub-batch its own slice of the gradient."""
    if on_gpu(transformer):
        max_padding = 1.0
    groups = padding_groups(wordpieces.lengths, max_padding, max_attention=attention_budget(transformer))
    if len(groups) <= 1 or returns_extra_outputs(transformer):
        return transformer(wordpieces, is_train)
    import torch

    results = []
    for idx in groups:
        sub = sub_batch(wordpieces, idx)
        results.append((idx, sub.input_ids.shape[1]) + tuple(transformer(sub, is_train)))
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
