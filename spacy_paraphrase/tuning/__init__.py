"""Tuning a component's decision settings on pair Docs: one home for what
``tune`` and ``cross-tune`` do.

- ``base.py``: the tuning interface (``Tuning``, ``Found``, ``TuningError``).
- ``choice.py``: the component to tune and its ``Tuning`` (from the
  component's ``tuned_as``).
- ``search.py``: the default grid, the "maximize a score key" objective, the
  best of a sweep.
- ``folds.py``: the k-fold loop of ``cross-tune`` (tuned scores on unseen pairs).
- ``spans.py``: a ``paraphrase_spans`` (thresholds, span decoding, vote-share map).
- ``classifier.py``: a ``pair_classifier`` (its decision threshold).
- ``settings.py``: saving tuned settings into a pipeline (``tune --save``).

Nothing is exported here: the commands import from the module that defines
each name.
"""
