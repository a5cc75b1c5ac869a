"""``import-model SOURCE OUTPUT_DIR``: a published Hugging Face token
classifier (the ContextDeP authors' ``AnnaWegmann/Highlight-Paraphrases-in-Dialog``,
or a folder saved by ``save_pretrained``) as a ``paraphrase_spans`` pipeline
with the authors' inference (the work: ``spacy_paraphrase/import_model.py``)."""
from pathlib import Path
from typing import Annotated, Dict, Optional

import typer
from wasabi import msg

from ..encoder.plan import LONG_PAIRS
from ..import_model import ImportModelError, import_model as import_checkpoint
from ._util import CommandError, app, run_command


def import_model(source: str, output_dir: Path, revision: Optional[str] = None, lang: str = "en",
                 long_pairs: str = "truncate", name: Optional[str] = None, force: bool = False,
                 positive_label: Optional[str] = None) -> Dict:
    """``import_model.import_model``: what was written; CommandError (one
    line, nothing written) when the source or the target is refused."""
    try:
        return import_checkpoint(source, output_dir, revision=revision, lang=lang, long_pairs=long_pairs, name=name,
                                 force=force, positive_label=positive_label)
    except (ImportModelError, OSError) as err:
        raise CommandError(str(err).replace("\n", " ")) from None


@app.command("import-model")
def import_model_cli(
    source: Annotated[str, typer.Argument(
        help="Hub name (e.g. AnnaWegmann/Highlight-Paraphrases-in-Dialog) or a folder saved by save_pretrained")],
    output_dir: Annotated[Path, typer.Argument(help="New directory for the spaCy pipeline")],
    revision: Annotated[Optional[str], typer.Option(
        "--revision", help="Hub revision (branch, tag or commit) to fetch; default: the cached or latest one")] = None,
    lang: Annotated[str, typer.Option("--lang", help="spaCy language of the pipeline's tokenizer")] = "en",
    long_pairs: Annotated[str, typer.Option(
        "--long-pairs", help=f"Pairs over the model's length: {' or '.join(LONG_PAIRS)} "
        "(truncate = the authors' inference; windows = every word scored)")] = "truncate",
    name: Annotated[Optional[str], typer.Option(
        "--name", help="meta.json name of the pipeline (default: from the source)")] = None,
    force: Annotated[bool, typer.Option(
        "--force", help="Replace OUTPUT_DIR when it is a pipeline directory (once the new one loads)")] = False,
    positive_label: Annotated[Optional[str], typer.Option(
        "--positive-label", help="The label meaning 'part of a paraphrase', for a checkpoint whose labels are "
        "named (default: LABEL_1 of unnamed labels, as the authors')")] = None,
):
    """Import a Hugging Face token classifier (2 labels, label 1 = part of a
    paraphrase) as a paraphrase_spans pipeline with the ContextDeP authors'
    inference: first sub-word per word, their 2-label head, above 0.5 (docs/paper-model.md)."""
    done = run_command(import_model, source, output_dir, revision, lang, long_pairs, name, force, positive_label)
    imported = done["imported"]
    where = f"revision {imported['revision']}" if imported["revision"] else f"weights sha256 {imported['sha256'][:12]}"
    msg.good(f"Wrote {output_dir} ('{done['name']}') from {imported['source']} ({imported['architecture']}, {where})")
    msg.text(f"Licence: {imported['licence'] or 'none stated on the model card'}; terms: {imported['terms']}")
    if imported.get("cite"):
        msg.text(f"Cite: {imported['cite']}")
    if not imported["sep_word_is_separator"]:
        msg.warn("'[SEP]' is not this tokenizer's separator: the pipeline encodes the turns as a text pair, "
                 "which differs from a one-sequence '[SEP]'-word input (docs/paper-model.md).")
    msg.text(f"Load it with spacy.load('{output_dir}'); annotate, evaluate, visualize and spacy package take it as is.")
