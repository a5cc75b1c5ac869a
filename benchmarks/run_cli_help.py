"""How long ``python -m spacy_paraphrase --help`` takes against ``python -m
spacy --help``, in one run on the same machine and interpreter.

Each command runs ``--repeats`` times (default 5) as a fresh process, the two
alternating (spaCy first, then this package, then spaCy again ...) so that a
change of load hits both; one untimed run of each first warms the file cache.
The result is the median wall time of each and their ratio (this package over
spaCy; the target is at most 1.2). The JSON names no machine paths. Run from
the repository root::

    python -m benchmarks.run_cli_help --output benchmarks/results/cli_help.json
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Sequence

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUTPUT = REPO / "benchmarks" / "results" / "cli_help.json"
COMMANDS: Dict[str, List[str]] = {
    "spacy": ["-m", "spacy", "--help"],
    "spacy_paraphrase": ["-m", "spacy_paraphrase", "--help"],
}
TARGET = 1.2


def time_command(args: Sequence[str]) -> float:
    """Wall seconds of ``python ARGS`` (the interpreter running this), which
    must exit with 0."""
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], cwd=REPO, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def measure(repeats: int, timer: Callable[[Sequence[str]], float] = time_command) -> Dict[str, List[float]]:
    """The seconds of every timed run of each command, alternating, after one
    untimed warm-up run of each."""
    for args in COMMANDS.values():
        timer(args)
    times: Dict[str, List[float]] = {name: [] for name in COMMANDS}
    for _ in range(repeats):
        for name, args in COMMANDS.items():
            times[name].append(timer(args))
    return times


def summarize(times: Dict[str, List[float]]) -> dict:
    """Median seconds of each command and the ratio this package / spaCy."""
    medians = {name: statistics.median(values) for name, values in times.items()}
    ratio = medians["spacy_paraphrase"] / medians["spacy"]
    return {
        "median_seconds": {name: round(value, 4) for name, value in medians.items()},
        "seconds": {name: [round(v, 4) for v in values] for name, values in times.items()},
        "ratio": round(ratio, 3),
        "target": TARGET,
        "meets_target": ratio <= TARGET,
    }


def versions() -> Dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for dist in ("spacy", "spacy-paraphrase", "typer", "torch"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "not installed"
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed runs of each command (median)")
    parser.add_argument("--output", default=str(DEFAULT_OUTPUT), help="the result JSON")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    result = {
        "command": "python -m benchmarks.run_cli_help" + (f" --repeats {args.repeats}" if args.repeats != 5 else ""),
        "commands": {name: "python " + " ".join(cmd) for name, cmd in COMMANDS.items()},
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": {"cpus": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()]},
        "versions": versions(),
        **summarize(measure(args.repeats)),
    }
    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf8")
    print(f"spacy_paraphrase --help {result['median_seconds']['spacy_paraphrase']:.2f} s, spacy --help "
          f"{result['median_seconds']['spacy']:.2f} s: ratio {result['ratio']:.2f} (target <= {TARGET})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
