"""``validate plan | sheet | score``: check the model against human coders
on one's own corpus (docs/report.md, "Validation").

plan.py says how many pairs to code for a target interval; sheet.py draws
the pairs to code (stratified, seeded) and writes the coding sheet (the
design elsewhere); coding.py reads coded sheets; agreement.py holds Cohen's
kappa, Krippendorff's alpha, the coders' majority (with its tie rule) and
mean vote; estimators.py the design-based rate, the model's precision /
recall / F1 and the Rogan-Gladen rate with their stratified cluster
bootstrap intervals; scoring.py puts them together for ``validate score``
(the report's validation section and the printed lines:
``report/validation_section.py``)."""
