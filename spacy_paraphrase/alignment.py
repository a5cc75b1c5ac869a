"""Moved to ``spacy_paraphrase.encoder.alignment`` (re-exported here until the
modules that import this one have moved)."""
from .encoder.alignment import char_to_token, token_pieces  # noqa: F401
