"""The pair transformer: each pair Doc's two turns encoded as one text pair
(docs/architecture.md, "The pair encoder").

alignment.py (pieces to tokens), windows.py (long pairs), plan.py
(tokenize and align a batch), batching.py (sub-batches by length), shim.py
(torch workarounds), quantize.py (int8 inference), model.py
(``PairTransformerModel``), architectures.py (the registered names).

Nothing is exported here: the architectures are found through entry points
(``setup.cfg``) and the code imports each name from the module that defines it.
"""
