"""A component's ``pipe`` over length-sorted batches, for the components
that own their pair transformer (``paraphrase_spans``, ``pair_classifier``).

``SORT_BATCHES`` batches of Docs at a time are run in batches of similar
length and yielded in their own order, so that ``nlp.pipe`` over a corpus in
any order pads little (as the ``annotate`` job does for its buffers, and
spacy-transformers' ``transformer`` component within one batch). Within a
batch, the encoder sub-batches by length itself (``encoder/batching.py``).
"""
import contextlib
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Iterable, Iterator

from spacy.tokens import Doc
from spacy.util import minibatch

from .encoder.batching import on_gpu
from .encoder.model import PairTransformerModel, plan_ahead

# Batches a component sorts by length at a time in ``pipe_by_length``.
SORT_BATCHES = 16


def pipe_by_length(pipe, stream: Iterable[Doc], batch_size: int) -> Iterator[Doc]:
    """``TrainablePipe.pipe`` over length-sorted batches: ``SORT_BATCHES``
    batches of ``stream`` at a time are sorted by length (tokens), predicted
    and annotated in batches of ``batch_size``, and yielded in stream order.
    When the component runs its own pair transformer, the next batch is
    tokenized and aligned in a worker thread while this one runs (all
    tokenizing happens in that one thread). A batch that fails goes to the
    component's error handler, as in spaCy; its Docs are not yielded."""
    error_handler = pipe.get_error_handler()
    owned = [node for node in pipe.model.walk() if isinstance(node, PairTransformerModel)]
    trf = owned[0] if len(owned) == 1 and owned[0].attrs.get("has_transformer") else None
    if trf is not None and not (on_gpu(trf.layers[0]) or spare_core()):
        trf = None  # torch computes on every core: a planning thread would only stall it
    planner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="spacy-paraphrase-plan") if trf is not None else None
    with planner or contextlib.nullcontext() as executor:
        for buffer in minibatch(stream, size=batch_size * SORT_BATCHES):
            order = sorted(range(len(buffer)), key=lambda i: len(buffer[i]))
            batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
            failed = set()
            try:
                if trf is not None:
                    plan_ahead(trf, [buffer[i] for i in batches[0]], executor)
                for k, idx in enumerate(batches):
                    docs = [buffer[i] for i in idx]
                    if trf is not None and k + 1 < len(batches):
                        plan_ahead(trf, [buffer[i] for i in batches[k + 1]], executor)
                    try:
                        pipe.set_annotations(docs, pipe.predict(docs))
                    except Exception as err:  # spaCy's contract: the handler decides
                        failed.update(idx)
                        error_handler(pipe.name, pipe, docs, err)
            finally:
                if trf is not None:
                    trf.planned.clear()  # plans of batches that never ran (an error)
            yield from (doc for i, doc in enumerate(buffer) if i not in failed)


def spare_core() -> bool:
    """Whether torch leaves a CPU core of this process free (fewer intra-op
    threads than cores) for the planning thread."""
    import torch

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return torch.get_num_threads() < cores
