"""The pair transformer: each pair Doc's two turns encoded as one text pair
(docs/architecture.md, "The pair encoder").

plan.py (tokenize a batch, cut long pairs into windows, align the pieces to
the tokens), batching.py (sub-batches by length within a batch), component.py
(the pair_transformer component: weights saved as safetensors), weights_file.py
(the weights read into a module built without them), shim.py
(torch workarounds), quantize.py (int8 inference), model.py
(``PairTransformerModel``), architectures.py (the registered names),
lean_imports.py (transformers imported without scikit-learn and scipy).

Nothing is exported here: the architectures are found through entry points
(``setup.cfg``) and the code imports each name from the module that defines it.
"""
