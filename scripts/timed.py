"""Run a command and record its wall-clock time as JSON (used by project.yml
so that the results tables can report training time):

    python scripts/timed.py metrics/multipit_minilm_train_time.json -- python -m spacy train ...
"""
import json
import sys
import time
from pathlib import Path

from subcommand import call  # scripts/subcommand.py: a leading `python` is this interpreter


def main() -> None:
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit("usage: timed.py OUTPUT.json -- COMMAND ...")
    output, cmd = Path(sys.argv[1]), sys.argv[3:]
    start = time.time()
    rc = call(cmd)
    seconds = time.time() - start
    if rc != 0:
        sys.exit(rc)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps({"command": " ".join(cmd), "seconds": round(seconds, 1)}, indent=2) + "\n")
    print(f"{seconds:.0f} s -> {output}")


if __name__ == "__main__":
    main()
