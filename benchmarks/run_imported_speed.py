#!/usr/bin/env python
"""An imported token classifier (``import-model``, docs/paper-model.md): the
pipeline against the ContextDeP authors' inference code path and against the
bare length-sorted forward of the same checkpoint; then int8 copies of the
imported pipeline (``quantize``) against it.

One process, interleaved rounds, the same pairs (ContextDeP dev repeated to
``--pairs``), batch size and torch threads:

``authors``
    their evaluation path: ``AutoModelForTokenClassification`` over each batch
    of ``--batch`` pairs in corpus order (no sorting), every pair tokenized as
    ``first words + ["[SEP]"] + second words`` (``is_split_into_words``,
    ``truncation=True``, padded to the batch's longest), softmax, and each
    word read at its first sub-word by walking ``word_ids``.
``bare``
    the same checkpoint's forward over length-sorted batches (tokenize the
    turns as a text pair, pad, forward, logits to the host): the floor.
``pipeline``
    ``nlp.pipe`` of the imported pipeline on pair Docs built beforehand.
``int8``, ``int8-token`` (``--quantize [METHOD ...]``, both when none is named)
    the same pipeline quantized by ``quantize --method ...``: pairs/s and the
    share of pair decisions (and highlighted words) identical to fp32.

Checkpoints (``--shape``): DeBERTa-v3 token classifiers with random weights
(no hub here) and the DeBERTa-v3-style sentencepiece tokenizer of
``../shared/gpu/models/deberta``: ``tiny`` (2 layers, hidden 64) or ``base``
(deberta-v3-base's shape: 12 layers, hidden 768), or ``--checkpoint DIR``
(a folder saved by ``save_pretrained``, e.g. the authors' own). Random
weights: speed and agreement mechanics, never quality.

    python -m benchmarks.run_imported_speed --shape tiny --pairs 440 --output benchmarks/results/imported_speed_tiny_cpu.json
    python -m benchmarks.run_imported_speed --shape base --pairs 32 --rounds 1 --quantize int8 --output benchmarks/results/imported_speed_base_cpu.json
"""
import argparse
import datetime
import platform
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Callable, Dict, List, Optional

import numpy

from .run_load_memory import cpu_flags
from .run_pipeline_overhead import DEFAULT_DATA, Pair, print_and_write, read_pairs, timed

REPO = Path(__file__).resolve().parents[1]
DEBERTA_TOKENIZER = REPO.parent / "shared" / "gpu" / "models" / "deberta"
QUANTIZE_METHODS_TIMED = ("int8", "int8-token")
SHAPES = {
    "tiny": dict(hidden_size=64, intermediate_size=128, num_attention_heads=2, num_hidden_layers=2),
    "base": dict(hidden_size=768, intermediate_size=3072, num_attention_heads=12, num_hidden_layers=12),
    # deberta-v3-large: 434M parameters, 1.74 GB of fp32 weights (its vocabulary is 128,100 whatever the tokenizer's)
    "large": dict(hidden_size=1024, intermediate_size=4096, num_attention_heads=16, num_hidden_layers=24,
                  vocab_size=128100),
}


def make_checkpoint(shape: str, folder: Path, model_max_length: Optional[int] = 512) -> Path:
    """A random DeBERTa-v3 token classifier of ``shape`` (2 labels, head scaled
    so that probabilities spread away from 0.5), saved with its tokenizer
    (its ``model_max_length`` set to ``model_max_length``; None keeps the
    tokenizer's own, "no limit" as the authors' checkpoints have it)."""
    import shutil

    import torch
    from transformers import AutoTokenizer, DebertaV2Config, DebertaV2ForTokenClassification

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(str(DEBERTA_TOKENIZER))
    shape = dict(SHAPES[shape])
    config = DebertaV2Config(
        vocab_size=shape.pop("vocab_size", len(tokenizer)), max_position_embeddings=512, relative_attention=True, position_buckets=256,
        norm_rel_ebd="layer_norm", share_att_key=True, pos_att_type=["p2c", "c2p"], position_biased_input=False,
        type_vocab_size=0, max_relative_positions=-1, num_labels=2, layer_norm_eps=1e-7, **shape)
    model = DebertaV2ForTokenClassification(config)
    with torch.no_grad():
        model.classifier.weight.mul_(50.0)
    model.save_pretrained(str(folder))
    if model_max_length is not None:
        tokenizer.model_max_length = model_max_length
    tokenizer.save_pretrained(str(folder))
    shutil.copy(DEBERTA_TOKENIZER / "spm.model", folder / "spm.model")
    return folder


class Authors:
    """The authors' inference path (module doc)."""

    def __init__(self, checkpoint: Path, pairs: List[Pair], batch: int):
        import torch
        from transformers import AutoModelForTokenClassification, AutoTokenizer

        self.torch = torch
        self.tok = AutoTokenizer.from_pretrained(str(checkpoint))
        self.model = AutoModelForTokenClassification.from_pretrained(str(checkpoint)).eval()
        self.batches = [pairs[i:i + batch] for i in range(0, len(pairs), batch)]

    def __call__(self) -> None:
        torch = self.torch
        with torch.inference_mode():
            for b in self.batches:
                enc = self.tok([a + ["[SEP]"] + c for a, c in b], is_split_into_words=True, truncation=True,
                               padding=True, return_tensors="pt")
                probs = torch.softmax(self.model(**enc).logits, dim=-1)[:, :, 1].numpy()
                for row in range(len(b)):
                    words: List[float] = []
                    for i, w in enumerate(enc.word_ids(row)):
                        if w is not None and w == len(words):
                            words.append(float(probs[row, i]))


class Bare:
    """The checkpoint's forward over length-sorted text-pair batches."""

    def __init__(self, checkpoint: Path, pairs: List[Pair], batch: int):
        import torch
        from transformers import AutoModelForTokenClassification, AutoTokenizer

        self.torch = torch
        self.tok = AutoTokenizer.from_pretrained(str(checkpoint))
        self.model = AutoModelForTokenClassification.from_pretrained(str(checkpoint)).eval()
        texts = [(" ".join(a), " ".join(c)) for a, c in pairs]
        lengths = [len(ids) for ids in self.tok([a for a, _ in texts], [c for _, c in texts],
                                                truncation=True)["input_ids"]]
        order = sorted(range(len(texts)), key=lambda i: lengths[i])
        self.batches = [[texts[i] for i in order[s:s + batch]] for s in range(0, len(order), batch)]

    def __call__(self) -> None:
        with self.torch.inference_mode():
            for b in self.batches:
                enc = self.tok([x for x, _ in b], [y for _, y in b], padding=True, truncation=True,
                               return_tensors="pt")
                self.model(**enc).logits.float().numpy()


def decisions(nlp, pairs: List[Pair], batch: int):
    """(pair decisions, highlighted tokens) of ``nlp`` on ``pairs``."""
    from spacy_paraphrase import make_pair_doc

    readout = nlp.get_pipe("paraphrase_spans").readout
    pair_dec, word_dec = [], []
    for doc in nlp.pipe([make_pair_doc(nlp, a, c) for a, c in pairs], batch_size=batch):
        pair_dec.append(readout.decision(doc))
        word_dec.append(readout.highlighted(doc))
    return numpy.array(pair_dec), word_dec


def say(message: str) -> None:
    """A progress line on stderr (a base-size run takes many minutes)."""
    print(f"[{datetime.datetime.now():%H:%M:%S}] {message}", file=sys.stderr, flush=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shape", default="tiny", choices=sorted(SHAPES))
    p.add_argument("--checkpoint", type=Path, help="a saved token classifier instead of a random --shape")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA)
    p.add_argument("--pairs", type=int, default=440)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    p.add_argument("--quantize", nargs="*", choices=QUANTIZE_METHODS_TIMED, default=None, metavar="METHOD",
                   help="also time and compare int8 copies (CPU): the methods named, or both when none is")
    p.add_argument("--output", type=Path)
    args = p.parse_args(argv)

    import spacy
    import torch

    from spacy_paraphrase import make_pair_doc
    from spacy_paraphrase.import_model import import_model
    from spacy_paraphrase.quantized_pipeline import quantize_pipeline

    if args.threads:
        torch.set_num_threads(args.threads)
    pairs, source = read_pairs(args.data, args.pairs, 0)
    no_sync: Callable[[], None] = lambda: None  # noqa: E731
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        checkpoint = args.checkpoint or make_checkpoint(args.shape, tmp / "checkpoint")
        say("importing the checkpoint")
        import_model(str(checkpoint), tmp / "imported")
        nlp = spacy.load(tmp / "imported")
        systems: Dict[str, Callable[[], None]] = {
            "authors": Authors(checkpoint, pairs, args.batch), "bare": Bare(checkpoint, pairs, args.batch)}
        quantized = {}
        if args.quantize is not None:
            for method in args.quantize or QUANTIZE_METHODS_TIMED:
                say(f"quantizing: {method}")
                quantize_pipeline(tmp / "imported", tmp / method, method, None, None, 0, 0.5)
                quantized[method] = spacy.load(tmp / method)

        def piped(model) -> Callable[[], None]:
            def run() -> None:
                for _ in model.pipe([make_pair_doc(model, a, c) for a, c in pairs], batch_size=args.batch):
                    pass
            return run

        systems["pipeline"] = piped(nlp)
        for method, model in quantized.items():
            systems[method] = piped(model)
        for name, run in systems.items():  # warm-up
            say(f"warm-up: {name}")
            run()
        seconds: Dict[str, List[float]] = {name: [] for name in systems}
        for _ in range(args.rounds):
            for name, run in systems.items():
                seconds[name].append(timed(run, no_sync))
                say(f"{name}: {seconds[name][-1]:.1f} s")
        med = {k: statistics.median(v) for k, v in seconds.items()}
        result = {
            "command": "python -m benchmarks.run_imported_speed " + " ".join(
                str(a) if not Path(str(a)).is_absolute() else Path(str(a)).name for a in (argv or sys.argv[1:])),
            "date": datetime.date.today().isoformat(),
            "machine": {"python": platform.python_version(), "torch": torch.__version__,
                        "torch_threads": torch.get_num_threads(), "device": "cpu",
                        "cpu_flags": cpu_flags()},
            "checkpoint": args.checkpoint.name if args.checkpoint else f"random deberta-v3 token classifier, {args.shape}",
            "pairs": args.pairs, "pair_source": source, "batch": args.batch, "rounds": args.rounds,
            "seconds": seconds,
            "pairs_per_s": {k: args.pairs / v for k, v in med.items()},
            "pipeline_over_authors": med["authors"] / med["pipeline"],
            "pipeline_over_bare": med["bare"] / med["pipeline"],
        }
        if quantized:
            fp32_pairs, fp32_words = decisions(nlp, pairs, args.batch)
            result["quantized"] = {}
            for method, model in quantized.items():
                q_pairs, q_words = decisions(model, pairs, args.batch)
                words_equal = numpy.concatenate([a == b for a, b in zip(fp32_words, q_words)])
                result["quantized"][method] = {
                    "over_fp32": med["pipeline"] / med[method],
                    "identical_pair_decisions": float((fp32_pairs == q_pairs).mean()),
                    "identical_word_highlights": float(words_equal.mean()),
                    "fp32_paraphrase_share": float(fp32_pairs.mean()),
                }
    print_and_write(result, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
