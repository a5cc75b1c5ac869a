"""One-off studies of spacy-paraphrase, kept apart from the product and from the
standing benchmarks; see studies/README.md.

Run each module from the repository root as ``python -m studies.<module>``.
"""
