"""What a trained pipeline records about its backbone, in ``meta.json``.

The encoder keeps where its weights came from on the model
(``model.attrs["backbone"]``: name, source, sha256, licence, packages; see
``resolve.py``); the attribute is serialized with the model, so a sourced
transformer (``[components.transformer] source = ...``) keeps it too. The
paraphrase components copy it into ``nlp.meta["spacy_paraphrase"]["backbone"]``
when they are initialized, which ``nlp.to_disk`` and ``spacy package`` write out.
"""
from typing import Dict, Optional

META_KEY = "spacy_paraphrase"


def find_backbone_record(nlp) -> Optional[Dict]:
    # nlp.components, not nlp.pipeline: `spacy train` initializes with the
    # sourced (resumed) and frozen components disabled
    for _, pipe in nlp.components:
        model = getattr(pipe, "model", None)
        if model is None or not hasattr(model, "walk"):
            continue
        for node in model.walk():
            record = node.attrs.get("backbone")
            if isinstance(record, dict):
                return dict(record)
    return None


def record_backbone(nlp) -> Optional[Dict]:
    """Copy the backbone record of ``nlp``'s transformer into ``nlp.meta``."""
    if nlp is None:
        return None
    record = find_backbone_record(nlp)
    if record is not None:
        nlp.meta.setdefault(META_KEY, {})["backbone"] = record
    return record
