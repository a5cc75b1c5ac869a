"""Pictures of the highlights: HTML of pair Docs and annotate records.

``render`` draws each pair's two turns side by side, words shaded by their
probability on a stated scale (``shade_scale``: by default opacity = p on
every pair, muted grey in a pair that is not a paraphrase) or, for converted
gold Docs, by the share of
annotators who highlighted them, spans outlined and linked across the turns,
and a head line with the pair score against the decision threshold, the
margin, the vote share and the agreement (their meanings in the legend).
``displacy_manual`` gives displaCy's own ``style="span"`` input. The command
``python -m spacy_paraphrase visualize`` writes a page (``spacy_paraphrase/cli/visualize.py``; its inputs: ``inputs.py``). What the
pictures read is the README's "What the component writes"; usage in
docs/visualize.md.
"""
from .manual import DISPLACY_COLORS, displacy_manual
from .markup import render, render_records

__all__ = ["render", "render_records", "displacy_manual", "DISPLACY_COLORS"]
