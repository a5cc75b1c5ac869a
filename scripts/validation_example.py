"""The worked example of docs/report.md ("A worked validation"): a validation
study run through the commands on real annotations, where the whole
corpus' coding is known, so the estimates can be checked against it.

    python scripts/validation_example.py [--data ../shared/data/contextdep] [--n 92]

The corpus: ContextDeP train + dev pairs with at least 4 annotators (the
conversation is the interview, the QID without its last part). The "model":
the share of "paraphrase" votes of each pair's annotators after its first
three (threshold 0.5): a real, imperfect judge that never saw the coders'
labels. The coders A, B, C: each pair's first, second and third annotator.
Then, as an analyst would: ``validate sheet`` (--stratify margin and none),
the coders' sheets filled in for the drawn pairs, ``validate score`` with
three coders and with two (every tie rule). Printed: each estimate with its
interval beside the census rate (all pairs' coders' majority). Everything
goes to ``--work`` (default training/validation_example, not committed)."""
import argparse
import csv
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def read_pairs(data: Path):
    pairs, votes = {}, defaultdict(list)
    for name in ("train.tsv", "dev.tsv"):
        with (data / name).open(newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                pairs.setdefault(row["QID"], (row["Guest Tokens"], row["Host Tokens"]))
                votes[row["QID"]].append(int(row["Is Paraphrase"]))
    return {q: pairs[q] for q in pairs if len(votes[q]) >= 4}, votes


def records(pairs, votes):
    out = []
    for qid, (guest, host) in pairs.items():
        rest = votes[qid][3:]
        share = sum(rest) / len(rest)
        out.append({"pair_id": qid, "conversation_id": qid.rsplit("-", 1)[0],
                    "first": {"speaker": "GUEST", "utterance_ids": [qid + "g"], "text": guest},
                    "second": {"speaker": "HOST", "utterance_ids": [qid], "text": host},
                    "score": share, "is_paraphrase": share >= 0.5, "vote_share": share, "agreement": None,
                    "margin": share - 0.5, "spans": []})
    return out


def cli(*args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "spacy_paraphrase", *args], capture_output=True, text=True,
                          cwd=ROOT)
    if proc.returncode:
        sys.exit(f"{' '.join(args)}: {proc.stdout}{proc.stderr}")
    return proc.stdout


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "contextdep"))
    parser.add_argument("--work", default="training/validation_example")
    parser.add_argument("--n", type=int, default=92)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    work = (ROOT / args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    pairs, votes = read_pairs(Path(args.data))
    recs = records(pairs, votes)
    path = work / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    census = sum(2 * sum(votes[q][:3]) > 3 for q in pairs) / len(pairs)
    model = sum(r["is_paraphrase"] for r in recs) / len(recs)
    print(f"corpus: {len(recs)} pairs, {len({r['conversation_id'] for r in recs})} conversations; "
          f"model's rate {model:.3f}; census (majority of A, B, C over every pair) {census:.3f}")
    for stratify in ("margin", "none"):
        sheet = work / f"coding_{stratify}" / "sheet.csv"
        design = work / f"{stratify}.design.json"
        cli("validate", "sheet", str(path), "-o", str(sheet), "--n", str(args.n), "--stratify", stratify,
            "--seed", str(args.seed), "--design-out", str(design))
        with sheet.open(newline="", encoding="utf-8") as f:
            drawn = [row["pair_id"] for row in csv.DictReader(f)]
        coders = []
        for i, name in enumerate("ABC"):
            coders.append(work / f"{stratify}_{name}.csv")
            coders[-1].write_text("pair_id,label\n" + "".join(f"{q},{votes[q][i]}\n" for q in drawn),
                                  encoding="utf-8")
        for label, sheets, tie in (("3 coders", coders, "half"), ("2 coders", coders[:2], "half"),
                                   ("2 coders", coders[:2], "not-paraphrase"), ("2 coders", coders[:2], "exclude")):
            out = work / f"scores_{stratify}_{len(sheets)}_{tie}.json"
            cli("validate", "score", *map(str, sheets), "-r", str(path), "--design", str(design), "--tie", tie,
                "-o", str(out), "--seed", str(args.seed))
            s = json.loads(out.read_text(encoding="utf-8"))
            shown = []
            for key, entry in [*s["rate"].items(), ("precision", s["model_vs_majority"]["precision"])]:
                if key == "model":
                    continue
                ci = f"{entry['low']:.3f}-{entry['high']:.3f}" if entry.get("low") is not None else entry.get("note")
                shown.append(f"{key} {entry['value']:.3f} [{ci}]")
            print(f"--stratify {stratify}, {label}, --tie {tie} ({s['ties']['pairs']} ties): " + "; ".join(shown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
