"""The ``paraphrase_spans`` component and everything around it: the tagger
model, the readout (token probabilities -> ``doc.cats`` / ``doc.spans``), the
scorer and the reference baselines (tuning it: ``spacy_paraphrase/tuning/spans.py``).

Exported: the README's functions (``highlight_flags``, ``token_probs``); the
rest is imported from its module. The factories are found through entry points."""
from .readout import highlight_flags, token_probs

__all__ = ["highlight_flags", "token_probs"]
