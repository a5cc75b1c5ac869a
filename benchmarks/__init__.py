"""Experiments on spacy-paraphrase and their tables; see benchmarks/README.md.

Run each module from the repository root as ``python -m benchmarks.<module>``.
"""
