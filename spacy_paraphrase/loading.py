"""Loading a trained pipeline: the one ``load_pipeline`` the commands, the
annotate engines and their Ray workers use."""
from pathlib import Path
from typing import Iterable

import spacy
from spacy.language import Language


def load_pipeline(model: str, gpu_id: int = -1, exclude: Iterable[str] = ()) -> Language:
    """``spacy.load(model, exclude=exclude)`` on GPU ``gpu_id`` (required when >= 0; -1: CPU).
    ValueError, with what to pass instead, when ``model`` is no pipeline (no
    such directory or package, a directory missing its files, a broken config)."""
    if gpu_id >= 0:
        spacy.require_gpu(gpu_id)
    try:
        return spacy.load(model, exclude=list(exclude))
    except (OSError, ValueError) as err:  # spaCy's E050/E053: not (all of) a pipeline; a bad config
        what = "directory" if Path(model).exists() else "name (no such directory or package)"
        raise ValueError(
            f"Cannot load the pipeline {model!r}: this {what} cannot be loaded ({str(err).strip()}); "
            "pass a complete pipeline directory (as `spacy project run all` writes "
            "training/contextdep_minilm_cpu/model-tuned) or an installed pipeline package."
        ) from None
