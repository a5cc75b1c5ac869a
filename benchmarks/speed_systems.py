"""The systems ``run_speed`` compares, one worker function per (system,
task), each run in its own subprocess (``python -m benchmarks.run_speed
--worker SYSTEM --task TASK``; see ``run_speed`` and ``benchmarks/README.md``):

(a) ``backbone``: the bare ``AutoModel`` forward pass on batches tokenized and
padded beforehand; (b) ``hf``: plain HF token classification
(``hf_token_reference``), inference and a torch training loop; (c)
``pipeline``: ``nlp.pipe`` and the ``nlp.update`` step of ``spacy train``.
The ``prepare`` worker reads the environment and the ContextDeP pairs.

Workers import torch, transformers and spaCy inside the function: the parent
imports this module but must stay small, and workers (a) and (b) never import
spaCy (it would count in their memory).
"""
import json
import platform
from typing import Dict

from .speed_measure import infer_result, maybe_profile, memory_now, repeat, timed, train_result
from .speed_pairs import batches

INFER_SYSTEMS = ("backbone", "hf", "pipeline")
TRAIN_SYSTEMS = ("hf", "pipeline")
SCALE_SYSTEMS = ("hf", "pipeline")
SYSTEM_LABELS = {
    "backbone": "(a) bare backbone forward",
    "hf": "(b) plain HF token classification",
    "pipeline": "(c) spacy-paraphrase pipeline",
}


def _setup_torch(threads: int):
    import torch

    if threads > 0:
        torch.set_num_threads(threads)
    import transformers

    transformers.logging.set_verbosity_error()
    return torch


def resolve_model_name(name: str) -> str:
    """What transformers should load for ``name`` (a folder, the hub name, or
    the offline build: ``backbones.resolve.resolve_backbone``). Unlike
    ``resolve_backbone`` it never fails: an unknown name is returned as is,
    for transformers to report."""
    from spacy_paraphrase.backbones.resolve import BackboneNotFound, resolve_backbone

    try:
        return resolve_backbone(name).location
    except BackboneNotFound:
        return name


def _source(args) -> str:
    """Where (a) and (b) load the backbone from: resolved once by the prepare
    worker, so that these workers never import spaCy (it would count in their
    memory)."""
    return args.source or args.model


def _word_pairs(pairs):
    """The (first words, second words) of each pair, as hf_token_reference takes them."""
    return [(p["first"], p["second"]) for p in pairs]


def worker_infer_backbone(args, pairs):
    torch = _setup_torch(args.threads)
    from transformers import AutoModel, AutoTokenizer

    from . import hf_token_reference as hf

    source = _source(args)
    (tokenizer, model), load_s, _ = timed(
        lambda: (AutoTokenizer.from_pretrained(source, use_fast=True), AutoModel.from_pretrained(source))
    )
    model.eval()
    mem_load = memory_now()
    inputs, prep_s, _ = timed(
        lambda: [dict(hf.tokenize(tokenizer, b)) for b in batches(_word_pairs(pairs), args.batch_size)]
    )
    n_pieces = sum(int(x["attention_mask"].sum()) for x in inputs)
    n_padded = sum(int(x["input_ids"].numel()) for x in inputs)

    def run():
        for x in inputs:
            model(**x)

    with torch.inference_mode():
        model(**inputs[0])  # warm-up
        mem_before = memory_now()
        wall, cpu, walls = repeat(args, run)
    return infer_result(
        pairs, args.batch_size, wall, cpu, mem_load, mem_before,
        {"load_seconds": load_s, "prepare_seconds": prep_s, "n_wordpieces": n_pieces, "run_seconds": walls,
         "n_padded_wordpieces": n_padded, "threads_used": torch.get_num_threads()},
    )


def hf_predict_batch(hf, tokenizer, model, batch):  # hf: the hf_token_reference module
    """The whole job of the plain HF token classifier for one batch: word
    probabilities of both turns and the pair score."""
    out = []
    for first, second in hf.predict_batch(tokenizer, model, batch):
        out.append((first, second, hf.pair_score((first, second))))
    return out


def worker_infer_hf(args, pairs):
    torch = _setup_torch(args.threads)
    from . import hf_token_reference as hf

    source = _source(args)
    (tokenizer, model), load_s, _ = timed(lambda: hf.load(source))
    model.eval()
    mem_load = memory_now()
    groups = batches(_word_pairs(pairs), args.batch_size)
    results = []

    def run():
        for b in groups:
            results.extend(hf_predict_batch(hf, tokenizer, model, b))

    with torch.inference_mode():
        hf_predict_batch(hf, tokenizer, model, groups[0])  # warm-up
        mem_before = memory_now()
        wall, cpu, walls = repeat(args, run, setup=results.clear)
    assert len(results) == len(pairs)
    return infer_result(
        pairs, args.batch_size, wall, cpu, mem_load, mem_before,
        {"load_seconds": load_s, "run_seconds": walls, "threads_used": torch.get_num_threads()},
    )


def _load_nlp(args):
    import spacy
    import spacy_paraphrase  # noqa: F401  (registers the architectures)

    config = spacy.util.load_config(args.config)
    config["components"]["transformer"]["model"]["name"] = args.model
    return spacy.util.load_model_from_config(config, auto_fill=True)


def worker_infer_pipeline(args, pairs):
    torch = _setup_torch(args.threads)
    from spacy_paraphrase.pair_doc import make_pair_doc
    from spacy_paraphrase.paraphrase_spans import token_probs

    def load():
        nlp = _load_nlp(args)
        nlp.initialize()
        return nlp

    nlp, load_s, _ = timed(load)
    mem_load = memory_now()
    docs, build_s, _ = timed(lambda: [make_pair_doc(nlp, p["first"], p["second"]) for p in pairs])
    warm = [make_pair_doc(nlp, p["first"], p["second"]) for p in pairs[: args.batch_size]]
    list(nlp.pipe(warm, batch_size=args.batch_size))  # warm-up
    mem_before = memory_now()
    out_docs: list = []

    n_setups = [0]

    def setup():
        # Fresh, unannotated pair Docs for every repeat (built untimed).
        out_docs.clear()
        if n_setups[0] > 0:
            docs[:] = [make_pair_doc(nlp, p["first"], p["second"]) for p in pairs]
        n_setups[0] += 1

    wall, cpu, walls = repeat(
        args, lambda: out_docs.extend(nlp.pipe(docs, batch_size=args.batch_size)), setup=setup
    )
    assert len(out_docs) == len(pairs)
    for doc in out_docs:
        assert len(token_probs(doc)) == len(doc)
    return infer_result(
        pairs, args.batch_size, wall, cpu, mem_load, mem_before,
        {"load_seconds": load_s, "run_seconds": walls, "build_docs_seconds": build_s,
         "build_docs_per_s": len(pairs) / build_s if build_s > 0 else None,
         "threads_used": torch.get_num_threads()},
    )


def worker_train_hf(args, pairs):
    torch = _setup_torch(args.threads)
    from . import hf_token_reference as hf

    torch.manual_seed(args.seed)
    source = _source(args)
    (tokenizer, model), load_s, _ = timed(lambda: hf.load(source))
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.01)
    mem_load = memory_now()

    def encode(batch):
        enc, first_pieces = hf.encode(tokenizer, _word_pairs(batch))
        targets = [(p["targets_first"], p["targets_second"]) for p in batch]
        enc["labels"] = hf.labels(enc, first_pieces, targets)
        return dict(enc)

    # Like datasets.map + a padding collator: tokenized once, before the epochs.
    encoded, prep_s, _ = timed(lambda: [encode(b) for b in batches(pairs, args.batch_size)])

    def step(x):
        loss = model(**x).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()
        return float(loss)

    step(encoded[0])  # warm-up step
    mem_before = memory_now()
    losses: list = []
    _, wall, cpu = maybe_profile(args.profile_out, lambda: losses.extend(step(x) for x in encoded))
    return train_result(
        pairs, args.batch_size, wall, cpu, mem_load, mem_before, losses,
        {"load_seconds": load_s, "prepare_seconds": prep_s, "threads_used": torch.get_num_threads()},
    )


def worker_train_pipeline(args, pairs):
    torch = _setup_torch(args.threads)
    from spacy.training import Example
    from spacy.util import fix_random_seed
    from spacy_paraphrase.pair_doc import copy_pair_doc, make_pair_doc

    fix_random_seed(args.seed)

    def load():
        nlp = _load_nlp(args)
        examples = []
        for p in pairs:
            ref = make_pair_doc(nlp, p["first"], p["second"])
            ref.spans["paraphrase"] = []
            ref.spans["paraphrase"].attrs["token_targets"] = list(p["targets_first"]) + list(p["targets_second"])
            ref.cats["PARAPHRASE"] = float(any(p["targets_first"]))
            examples.append(Example(copy_pair_doc(ref, nlp.vocab), ref))
        optimizer = nlp.initialize(lambda: examples)
        return nlp, examples, optimizer

    (nlp, examples, optimizer), load_s, _ = timed(load)
    mem_load = memory_now()
    dropout = float(nlp.config["training"]["dropout"])
    groups = batches(examples, args.batch_size)

    def step(batch):
        # What `spacy train` does per step (accumulate_gradient = 1).
        losses: Dict[str, float] = {}
        nlp.update(batch, drop=dropout, sgd=optimizer, losses=losses)
        optimizer.step_schedules()
        return losses.get("paraphrase_spans", 0.0)

    step(groups[0])  # warm-up step
    mem_before = memory_now()
    losses: list = []
    _, wall, cpu = maybe_profile(args.profile_out, lambda: losses.extend(step(b) for b in groups))
    return train_result(
        pairs, args.batch_size, wall, cpu, mem_load, mem_before, losses,
        {"load_seconds": load_s, "threads_used": torch.get_num_threads()},
    )


def worker_prepare(args):
    """Environment facts and, when --data is given, the ContextDeP pairs (in a
    worker, so that the parent never imports torch or spaCy)."""
    from importlib.metadata import version

    import spacy
    import torch

    info = {
        "threads_default": torch.get_num_threads(),
        "versions": {
            "python": platform.python_version(),
            **{name: version(name) for name in
               ("torch", "transformers", "tokenizers", "spacy", "spacy-transformers", "thinc", "numpy")},
        },
        "model_source": resolve_model_name(args.model),
    }
    if args.data and not args.no_data:
        from spacy_paraphrase.converters.contextdep import convert_contextdep

        docs, _ = convert_contextdep(args.data, spacy.blank("en").vocab, mode="majority")
        pairs = []
        for doc in docs:
            first, second = doc.spans["turns"]
            targets = doc.spans["paraphrase"].attrs["token_targets"]
            # Whitespace tokens stand for ContextDeP's empty words.
            words = [("" if t.is_space else t.text) for t in doc]
            pairs.append({
                "id": doc.spans["turns"].attrs.get("id"),
                "first": words[first.start : first.end],
                "second": words[second.start : second.end],
                "targets_first": [float(x) for x in targets[first.start : first.end]],
                "targets_second": [float(x) for x in targets[second.start : second.end]],
            })
        info["pairs"] = pairs
    return info


WORKERS = {
    ("backbone", "infer"): worker_infer_backbone,
    ("hf", "infer"): worker_infer_hf,
    ("pipeline", "infer"): worker_infer_pipeline,
    ("hf", "train"): worker_train_hf,
    ("pipeline", "train"): worker_train_pipeline,
}


def run_worker(args) -> int:
    """A worker process: run (args.worker, args.task) on the pairs in
    args.pairs and write its result to args.result as JSON."""
    if args.worker == "prepare":
        result = worker_prepare(args)
    else:
        with open(args.pairs, encoding="utf-8") as f:
            pairs = json.load(f)
        result = WORKERS[(args.worker, args.task)](args, pairs)
        result["system"] = args.worker
        result["task"] = args.task
    with open(args.result, "w", encoding="utf-8") as f:
        json.dump(result, f)
    return 0
