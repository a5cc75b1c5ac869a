"""The walk of ``annotate``'s input path: run the plain ``annotate`` function
(``cli/annotate.py``) on a small MediaSum-style file with a tiny pipeline and
list, in call order, the package functions it passes through outside the model
(``paraphrase_spans``, ``encoder``, ``backbones``, ``pair_classifier``,
``tuning``; nested functions, comprehensions and dataclass methods made by
Python left out). A *stop* is a visit to a module (consecutive calls in one
module are one stop), a *return* a stop at a module already passed:

    python scripts/walk_annotate.py [--functions] [--fold MODULE=INTO ...] [--leave-out MODULE ...]

The house issue's bar for this walk is at most 10 modules and 15 returns
(docs/architecture.md, "Where to make a change", says where each part lives).
``--fold annotate.paths=annotate.resume`` counts the walk as if the first
module's functions were in the second; ``--leave-out pair_doc`` as if that
module were part of the model: what a proposed layout would measure, before
any file is moved.
"""
import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODEL = tuple(f"spacy_paraphrase.{name}" for name in ("paraphrase_spans", "encoder", "backbones",
                                                       "pair_classifier", "tuning"))
NESTED = ("<locals>", "<lambda>", "<genexpr>", "<listcomp>", "<dictcomp>", "<setcomp>", "__create_fn__")


def walk(work: Path):
    """(module, function) of each package function ``annotate`` calls outside the model, first calls only."""
    sys.path.insert(0, str(ROOT))
    from thinc.api import fix_random_seed

    from spacy_paraphrase.cli.annotate import annotate
    from tests.util import make_examples, make_nlp, make_tiny_bert

    fix_random_seed(0)
    nlp = make_nlp(str(make_tiny_bert(work / "bert")))
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    nlp.to_disk(work / "model")
    dialog = {"utt": ["How are you today?", "I am fine, and you?", "Fine, you ask how I am."], "speaker": ["A", "B", "A"]}
    (work / "dialogs.jsonl").write_text("".join(json.dumps({"id": f"d{i}", **dialog}) + "\n" for i in range(3)))
    calls = []

    def profile(frame, event, arg):
        module = frame.f_globals.get("__name__", "")
        name = frame.f_code.co_qualname
        if (event == "call" and module.startswith("spacy_paraphrase") and not module.startswith(MODEL)
                and not any(mark in name for mark in NESTED) and (module, name) not in calls):
            calls.append((module, name))

    sys.setprofile(profile)
    try:
        annotate(str(work / "model"), work / "dialogs.jsonl", work / "records.jsonl", count=True)
    finally:
        sys.setprofile(None)
    return calls


def stops(calls):
    """The modules of ``calls`` in order, consecutive calls in one module as one stop."""
    return [module for i, (module, _) in enumerate(calls) if i == 0 or calls[i - 1][0] != module]


def regroup(calls, folds=None, leave_out=()):
    """``calls`` with each module of ``folds`` (module -> module) renamed and
    the calls of the ``leave_out`` modules dropped (full module names)."""
    folds = folds or {}
    return [(folds.get(module, module), name) for module, name in calls if module not in leave_out]


def _full(module: str) -> str:
    return module if module.startswith("spacy_paraphrase.") else f"spacy_paraphrase.{module}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--functions", action="store_true", help="list every function of the walk")
    parser.add_argument("--fold", action="append", default=[], metavar="MODULE=INTO",
                        help="count MODULE's functions as INTO's (e.g. annotate.heap=annotate.annotator)")
    parser.add_argument("--leave-out", action="append", default=[], metavar="MODULE",
                        help="count MODULE as part of the model (e.g. pair_doc)")
    args = parser.parse_args()
    if any(fold.count("=") != 1 or "" in fold.split("=") for fold in args.fold):
        parser.error("--fold takes MODULE=INTO, e.g. annotate.heap=annotate.annotator")
    folds = {_full(module): _full(into) for module, into in (fold.split("=") for fold in args.fold)}
    with tempfile.TemporaryDirectory() as work:
        calls = walk(Path(work))
    passed = {module for module, _ in calls}
    unknown = sorted(module for module in (*folds, *map(_full, args.leave_out)) if module not in passed)
    if unknown:
        parser.error(f"not on the walk: {', '.join(unknown)}")
    calls = regroup(calls, folds, {_full(module) for module in args.leave_out})
    path = stops(calls)
    modules = sorted(set(path))
    short = lambda module: module.replace("spacy_paraphrase.", "")  # noqa: E731
    print(f"{len(calls)} functions, {len(path)} stops in {len(modules)} modules, {len(path) - len(modules)} returns")
    print("modules:", ", ".join(short(module) for module in modules))
    print("stops:", " -> ".join(short(module) for module in path))
    if args.functions:
        for module, name in calls:
            print(f"  {short(module)}.{name}")


if __name__ == "__main__":
    main()
