"""``quantize MODEL OUTPUT_DIR``: copy a trained pipeline as one whose
transformer runs in int8 on CPU (the work: ``spacy_paraphrase/quantize.py``)."""
from ..quantize import quantize_cli
from ._util import app

app.command("quantize")(quantize_cli)
