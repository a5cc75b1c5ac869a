"""Run a command only when a file exists, else say so and succeed (project.yml
steps on optional data, e.g. ContextDeP's test split, which ``project assets``
fetches but a local copy of the data may lack):

    python scripts/when_present.py assets/contextdep/test.tsv -- python -m spacy_paraphrase convert contextdep ...
"""
import sys
from pathlib import Path

from subcommand import call  # scripts/subcommand.py: a leading `python` is this interpreter


def main() -> None:
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit("usage: when_present.py PATH -- COMMAND ...")
    path, cmd = Path(sys.argv[1]), sys.argv[3:]
    if not path.exists():
        print(f"{path} not found: skipped `{' '.join(cmd)}`")
        return
    sys.exit(call(cmd))


if __name__ == "__main__":
    main()
