"""Bi-encoder baseline for pair classification (issue: pair-aware vs separate).

Each text goes through the same backbone *alone*; the mean-pooled vectors u, v
are combined as [u, v, |u-v|, u*v] and classified by a linear layer (the
Sentence-BERT classification setup). Trained and evaluated on the same .spacy
files (pair Docs with ``doc.cats`` over the label set, as the converters write
them) with the same optimizer recipe as the pair-aware CPU configs: the same
number of steps and batch size, Adam with decoupled weight decay 0.01, peak
learning rate 1e-4 with linear warmup (10% of the steps) and linear decay,
gradient clipping at 1.0, dropout 0.1 in the backbone. Training order is a
seeded shuffle each epoch. The project commands ``bi_encoder_multipit`` and
``bi_encoder_circa`` run it on exactly the files the pair-aware workflows use:

    python -m benchmarks.run_bi_encoder corpus/multipit/train.spacy corpus/multipit/dev.spacy \
        --steps 558 --batch-size 16 --positive IS_PARAPHRASE \
        --output benchmarks/results/bi_encoder_multipit.json

Inference speed (pairs/second, both texts encoded, batch 32) is measured on dev.
"""
import argparse
import json
import random
import time
from pathlib import Path

import numpy
import spacy
import torch
from spacy.tokens import DocBin

from spacy_paraphrase.pair_doc import get_turns

from .speed_systems import resolve_model_name


def load(path: Path, vocab):
    rows = []
    for doc in DocBin().from_disk(path).get_docs(vocab):
        first, second = get_turns(doc)
        rows.append((doc.text[first.start_char : first.end_char], doc.text[second.start_char : second.end_char], dict(doc.cats)))
    return rows


class BiEncoder(torch.nn.Module):
    def __init__(self, name: str, n_labels: int):
        super().__init__()
        from transformers import AutoModel

        self.encoder = AutoModel.from_pretrained(resolve_model_name(name))
        width = self.encoder.config.hidden_size
        self.head = torch.nn.Linear(4 * width, n_labels)

    def embed(self, batch):
        out = self.encoder(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).float()
        return (out * mask).sum(1) / mask.sum(1).clamp(min=1)

    def forward(self, a, b):
        u, v = self.embed(a), self.embed(b)
        return self.head(torch.cat([u, v, (u - v).abs(), u * v], dim=-1))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("train", type=Path)
    p.add_argument("dev", type=Path)
    p.add_argument("--model", default="sentence-transformers/all-MiniLM-L6-v2")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=1e-4, help="peak learning rate")
    p.add_argument("--warmup", type=float, default=0.1, help="fraction of steps with linear warmup")
    p.add_argument("--weight-decay", type=float, default=0.01)
    p.add_argument("--grad-clip", type=float, default=1.0)
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--positive", default=None, help="positive label for P/R/F1 of binary tasks")
    p.add_argument("--limit", type=int, default=0, help="use only the first N training pairs (after a seeded shuffle)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--output", type=Path, default=None)
    args = p.parse_args()
    from transformers import AutoTokenizer

    random.seed(args.seed)
    torch.manual_seed(args.seed)
    nlp = spacy.blank("xx")
    train, dev = load(args.train, nlp.vocab), load(args.dev, nlp.vocab)
    random.Random(args.seed).shuffle(train)
    if args.limit:
        train = train[: args.limit]
    labels = sorted({k for _, _, cats in train + dev for k in cats})
    tok = AutoTokenizer.from_pretrained(resolve_model_name(args.model))
    model = BiEncoder(args.model, len(labels))
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, eps=1e-8, weight_decay=args.weight_decay)
    warmup = max(1, int(args.warmup * args.steps))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warmup, max(0.0, (args.steps - s) / max(1, args.steps - warmup)))
    )

    def enc(texts):
        return tok(texts, padding=True, truncation=True, max_length=args.max_length, return_tensors="pt")

    def target(rows):
        return torch.tensor([[r[2].get(lab, 0.0) for lab in labels] for r in rows], dtype=torch.float32)

    start = time.time()
    model.train()
    order = []
    for step in range(args.steps):
        if not order:
            order = list(range(len(train)))
            random.shuffle(order)
        idx, order = order[: args.batch_size], order[args.batch_size :]
        rows = [train[i] for i in idx]
        logits = model(enc([r[0] for r in rows]), enc([r[1] for r in rows]))
        loss = -(target(rows) * torch.log_softmax(logits, -1)).sum(-1).mean()
        opt.zero_grad()
        loss.backward()
        if args.grad_clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
        opt.step()
        sched.step()
    train_seconds = time.time() - start
    model.eval()
    preds = []
    start = time.time()
    with torch.inference_mode():
        for i in range(0, len(dev), 32):
            rows = dev[i : i + 32]
            preds.extend(torch.softmax(model(enc([r[0] for r in rows]), enc([r[1] for r in rows])), -1).tolist())
    infer_seconds = time.time() - start
    gold = [max(labels, key=lambda lab: r[2].get(lab, 0.0)) for r in dev]
    pred = [labels[int(numpy.argmax(pr))] for pr in preds]
    result = {"system": "bi-encoder", "model": args.model, "steps": args.steps, "batch_size": args.batch_size,
              "lr": args.lr, "train_pairs": len(train), "dev_pairs": len(dev), "train_seconds": round(train_seconds, 1),
              "pairs_per_second": round(len(dev) / infer_seconds, 1), "labels": labels,
              "acc": float(numpy.mean([g == q for g, q in zip(gold, pred)]))}
    f1s = []
    for lab in labels:
        tp = sum(g == lab and q == lab for g, q in zip(gold, pred))
        fp = sum(g != lab and q == lab for g, q in zip(gold, pred))
        fn = sum(g == lab and q != lab for g, q in zip(gold, pred))
        prec = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        f1s.append(f1)
        if lab == args.positive:
            result.update({"pos_p": prec, "pos_r": rec, "pos_f": f1})
    result["macro_f"] = float(numpy.mean(f1s))
    print(json.dumps(result, indent=2))
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
