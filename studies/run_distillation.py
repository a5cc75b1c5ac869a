"""Does distillation through silver labels bring a small student closer to its
teacher than training on gold alone?

The path of docs/paper-model.md ("Distil it into the fast CPU recipe"), measured
offline with the project's own mpnet pipeline as the teacher (the authors'
checkpoints cannot be fetched here; ``--teacher DIR`` takes any trained or
imported pipeline instead):

1. ``convert contextdep`` ContextDeP train (soft targets) and dev (majority).
2. teacher: ``spacy train configs/contextdep_mpnet_cpu.cfg`` on train, unless
   ``--teacher`` is given.
3. silver: ``llm silver TEACHER train.spacy silver.spacy --soft``: the train
   pairs read as unlabelled text, the teacher's word probabilities as soft token
   targets and its pair score as the pair target.
4. two MiniLM students with the same config, seed and steps
   (``configs/contextdep_minilm_cpu.cfg``): ``student`` on the silver pairs,
   ``gold`` on the gold train pairs.
5. on dev, each pipeline with its shipped thresholds: this project's metrics
   against the gold labels (``pair_acc``, ``pair_f``, ``jaccard_first``,
   ``jaccard_second``; not the paper's ``paper_*``) and the agreement with the teacher: the share of pairs
   with the teacher's decision, and the word Jaccard of its highlights against
   the teacher's, per turn (pairs where neither highlights a word of the turn
   count as 1); and how far apart the two students' agreement is, pair by pair
   (``student_against_gold``: discordant decisions, Jaccard differences with
   95% bootstrap intervals).

Every step is skipped when its output is there (a stopped run goes on). Result:
``--output`` (JSON, with the command).

    python -m studies.run_distillation ../shared/data/contextdep --work training/distill --teacher-steps 162 --output studies/results/distillation.json
"""
import argparse
import datetime
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

import numpy

REPO = Path(__file__).resolve().parents[1]


def run(cmd: List[str]) -> None:
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, cwd=REPO)


def train(config: str, train_path: Path, dev_path: Path, out: Path, steps: int, seed: int) -> Optional[float]:
    """``spacy train`` for ``steps`` optimizer steps; seconds taken (as
    recorded when ``out`` was trained before; None if not recorded)."""
    timing = out / "train_seconds.json"
    if (out / "model-best").exists():
        return json.loads(timing.read_text())["seconds"] if timing.exists() else None
    start = time.time()
    run([sys.executable, "-m", "spacy", "train", str(REPO / "configs" / f"{config}.cfg"), "--output", str(out),
         "--paths.train", str(train_path), "--paths.dev", str(dev_path), "--system.seed", str(seed),
         "--training.max_epochs", "0", "--training.max_steps", str(steps),
         "--training.optimizer.learn_rate.total_steps", str(steps)])
    seconds = time.time() - start
    timing.write_text(json.dumps({"seconds": seconds}))
    return seconds


def decisions(nlp, docs) -> List[Dict[str, object]]:
    """Each processed pair's decision and highlighted tokens per turn, as the
    pipeline ships (its own thresholds)."""
    from spacy_paraphrase import get_turns

    readout = nlp.get_pipe("paraphrase_spans").readout
    out = []
    for doc in docs:
        flags = readout.highlighted(doc)
        first, second = get_turns(doc)
        out.append({"pair": readout.decision(doc),
                    "first": flags[first.start:first.end], "second": flags[second.start:second.end]})
    return out


def jaccard(a: numpy.ndarray, b: numpy.ndarray) -> float:
    union = (a | b).sum()
    return 1.0 if union == 0 else float((a & b).sum() / union)


def agreement(system: List[Dict[str, object]], teacher: List[Dict[str, object]]) -> Dict[str, float]:
    return {
        "pair_decisions_as_teacher": float(numpy.mean([s["pair"] == t["pair"] for s, t in zip(system, teacher)])),
        "jaccard_first_to_teacher": float(numpy.mean([jaccard(s["first"], t["first"]) for s, t in zip(system, teacher)])),
        "jaccard_second_to_teacher": float(numpy.mean([jaccard(s["second"], t["second"]) for s, t in zip(system, teacher)])),
    }


def student_against_gold(student: List[Dict[str, object]], gold: List[Dict[str, object]],
                         teacher: List[Dict[str, object]], seed: int = 0, rounds: int = 5000) -> Dict[str, object]:
    """How far apart the two students' agreement with the teacher is, pair by
    pair: the pairs where only one of them decides as the teacher does (the
    discordant pairs of a McNemar test), and the mean per-pair difference of
    their word Jaccards to the teacher (student - gold) with a 95% bootstrap
    interval over the dev pairs."""
    out: Dict[str, object] = {
        "pairs_only_student_as_teacher": int(sum(s["pair"] == t["pair"] and g["pair"] != t["pair"]
                                                 for s, g, t in zip(student, gold, teacher))),
        "pairs_only_gold_as_teacher": int(sum(g["pair"] == t["pair"] and s["pair"] != t["pair"]
                                              for s, g, t in zip(student, gold, teacher))),
    }
    rng = numpy.random.default_rng(seed)
    for side in ("first", "second"):
        diff = numpy.array([jaccard(s[side], t[side]) - jaccard(g[side], t[side])
                            for s, g, t in zip(student, gold, teacher)])
        means = diff[rng.integers(0, len(diff), (rounds, len(diff)))].mean(axis=1)
        out[f"jaccard_{side}_to_teacher_difference"] = float(diff.mean())
        out[f"jaccard_{side}_to_teacher_difference_ci95"] = [float(v) for v in numpy.percentile(means, [2.5, 97.5])]
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("data", type=Path, help="folder with ContextDeP train.tsv and dev.tsv")
    p.add_argument("--work", type=Path, default=Path("training/distill"))
    p.add_argument("--teacher", type=Path, help="a trained or imported pipeline (default: train mpnet)")
    p.add_argument("--teacher-steps", type=int, default=162)
    p.add_argument("--student-steps", type=int, default=318)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--output", type=Path)
    args = p.parse_args(argv)

    import spacy

    from spacy.scorer import Scorer

    from spacy_paraphrase.cli._util import process
    from spacy_paraphrase.corpus import PairCorpus

    from .run_quantize import write_json

    work = args.work.resolve()
    corpus = work / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    train_path, dev_path, silver = corpus / "train_soft.spacy", corpus / "dev.spacy", corpus / "silver.spacy"
    for tsv, out, mode in ((args.data / "train.tsv", train_path, "soft"), (args.data / "dev.tsv", dev_path, "majority")):
        if not out.exists():
            run([sys.executable, "-m", "spacy_paraphrase", "convert", "contextdep", str(tsv.resolve()), str(out),
                 "--mode", mode])
    seconds: Dict[str, Optional[float]] = {}
    if args.teacher is None:
        seconds["teacher"] = train("contextdep_mpnet_cpu", train_path, dev_path, work / "teacher",
                                   args.teacher_steps, args.seed)
        teacher = work / "teacher" / "model-best"
    else:
        teacher = args.teacher.resolve()
    if not silver.exists():
        run([sys.executable, "-m", "spacy_paraphrase", "llm", "silver", str(teacher), str(train_path), str(silver),
             "--soft"])
    seconds["student"] = train("contextdep_minilm_cpu", silver, dev_path, work / "student", args.student_steps,
                               args.seed)
    seconds["gold"] = train("contextdep_minilm_cpu", train_path, dev_path, work / "gold", args.student_steps,
                            args.seed)

    systems = {"teacher": teacher, "student": work / "student" / "model-best", "gold": work / "gold" / "model-best"}
    result: Dict[str, object] = {
        "command": "python -m studies.run_distillation " + " ".join(
            Path(a).name if Path(a).is_absolute() else a for a in (argv or sys.argv[1:])),
        "date": datetime.date.today().isoformat(),
        "teacher": args.teacher.name if args.teacher else f"contextdep_mpnet_cpu, {args.teacher_steps} steps",
        "students": f"contextdep_minilm_cpu, {args.student_steps} steps, seed {args.seed}",
        "train_seconds": seconds, "systems": {}}
    picked = {}
    for name, path in systems.items():
        nlp = spacy.load(path)
        examples = list(PairCorpus(dev_path)(nlp))
        examples = process(nlp, examples, 8)  # the pipeline runs once; scored and read from the same Docs
        scores = Scorer(nlp=nlp).score(examples)
        result["dev_pairs"] = len(examples)
        prefix = f"{nlp.get_pipe('paraphrase_spans').name}_"  # the scorer's keys carry the component's name
        result["systems"][name] = {k: scores[prefix + k] for k in ("pair_acc", "pair_f", "jaccard_first", "jaccard_second")}
        picked[name] = decisions(nlp, [eg.predicted for eg in examples])
        if name != "teacher":
            result["systems"][name].update(agreement(picked[name], picked["teacher"]))
    result["student_against_gold"] = student_against_gold(picked["student"], picked["gold"], picked["teacher"],
                                                          args.seed)
    print(json.dumps(result, indent=2))
    if args.output:
        write_json(result, str(args.output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
