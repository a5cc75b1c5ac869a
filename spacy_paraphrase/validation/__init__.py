"""``validate sheet | score``: check the model against human coders on one's
own corpus (docs/report.md, "Validation").

sheet.py draws the pairs to code (stratified, seeded) and writes the coding
sheet; coding.py reads coded sheets; agreement.py holds Cohen's kappa,
Krippendorff's alpha and the coders' majority; scoring.py the model's
precision / recall / F1 and the corrected paraphrase rate with bootstrap
intervals; summary.py the report's validation section."""
