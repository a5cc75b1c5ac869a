"""How the project's wrapper scripts (``timed.py``, ``when_present.py``) run
the command after their ``--``: a leading ``python`` / ``python3`` is the
interpreter running the script, and a leading ``pip`` / ``pip3`` is its
``python -m pip``, as spaCy's project runner does for a step's own first word.
Without this the words after ``--`` would run the PATH's ``python``, which is
not the project's venv when the user ran ``.venv/bin/python -m spacy project
run ...`` without activating it (or from a PATH with no ``python`` at all).
"""
import subprocess
import sys
from typing import List, Sequence


def resolve(cmd: Sequence[str]) -> List[str]:
    """``cmd`` with its leading interpreter made this one's."""
    cmd = list(cmd)
    if cmd and cmd[0] in ("python", "python3"):
        return [sys.executable] + cmd[1:]
    if cmd and cmd[0] in ("pip", "pip3"):
        return [sys.executable, "-m", "pip"] + cmd[1:]
    return cmd


def call(cmd: Sequence[str]) -> int:
    """Run ``cmd`` (``resolve``d) and return its exit code."""
    return subprocess.call(resolve(cmd))
