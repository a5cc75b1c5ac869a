"""The walk of ``annotate``'s input path: run the plain ``annotate`` function
(``cli/annotate.py``) on a small MediaSum-style file with a tiny pipeline and
list, in call order, the package functions it passes through outside the model
(``paraphrase_spans``, ``encoder``, ``backbones``, ``pair_classifier``,
``tuning``; nested functions, comprehensions and dataclass methods made by
Python left out). A *stop* is a visit to a module (consecutive calls in one
module are one stop), a *return* a stop at a module already passed:

    python scripts/walk_annotate.py [--functions]

The house issue's bar for this walk is at most 10 modules and 15 returns
(docs/architecture.md, "Where to make a change", says where each part lives).
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--functions", action="store_true", help="list every function of the walk")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        calls = walk(Path(work))
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
