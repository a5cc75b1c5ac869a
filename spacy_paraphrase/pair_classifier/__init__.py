"""The ``pair_classifier`` component: one label per pair Doc (``doc.cats``),
its model (``spacy_paraphrase.PairClassifier.v1``) and its scorer.

Nothing is exported here: the factory, architecture and scorer are found
through entry points (``setup.cfg``); code imports from the module that defines
each name (component.py, model.py, scorer.py)."""
