"""Backbones: where the transformer named in a config comes from, and how
the offline ones are built from the package registry (README, "Backbones").

- ``catalog.py``: the backbones that can be built offline, their packages,
  checksums and licences;
- ``resolve.py``: a config's name → a local folder, the hub or the offline
  build, and what a trained pipeline records about it;
- ``install.py`` / ``build.py`` / ``q4.py``: ``backbone install`` (download
  with pip, build, verify, record);
- the commands ``backbone list|install``: ``spacy_paraphrase/cli/backbone.py``.

Nothing is exported here: code imports from the module that defines each name.
"""
