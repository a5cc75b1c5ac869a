"""``quantize MODEL OUTPUT_DIR``: copy a trained pipeline as one whose
transformer runs in int8 on CPU (the work: ``spacy_paraphrase/quantized_pipeline.py``)."""
from pathlib import Path
from typing import Annotated, Dict, Optional

import typer
from wasabi import msg

from ..encoder.quantize import QUANTIZE_METHODS
from ..encoder.quantize import DEFAULT_ALPHA
from ..quantized_pipeline import DEFAULT_CALIBRATION_PAIRS, DEFAULT_METHOD, QuantizeCommandError, quantize_pipeline
from ._util import CommandError, app, run_command


def quantize(model_dir: Path, output_dir: Path, method: str = DEFAULT_METHOD, name: Optional[str] = None,
             calibrate: Optional[Path] = None, calibration_pairs: int = DEFAULT_CALIBRATION_PAIRS,
             alpha: float = DEFAULT_ALPHA) -> Dict:
    """``quantized_pipeline.quantize_pipeline``: what was written (name,
    settings, quantized layers, calibration); CommandError when the pipeline
    cannot be quantized or written."""
    try:
        return quantize_pipeline(model_dir, output_dir, method, name, calibrate, calibration_pairs, alpha)
    except (QuantizeCommandError, OSError, ValueError) as err:
        raise CommandError(str(err)) from None


@app.command("quantize")
def quantize_cli(
    model_dir: Annotated[Path, typer.Argument(help="Trained pipeline directory")],
    output_dir: Annotated[Path, typer.Argument(help="New directory for the quantized pipeline")],
    method: Annotated[str, typer.Option(
        "--method", "-m",
        help=f"How to quantize: {', '.join(QUANTIZE_METHODS)} (the config's quantize names; int8-token keeps "
        "quality, int8 is faster)")] = DEFAULT_METHOD,
    name: Annotated[Optional[str], typer.Option(
        "--name", help="meta.json name of the new pipeline (default: <name>_int8 / _int8_token / _int8_smooth)"
    )] = None,
    calibrate: Annotated[Optional[Path], typer.Option(
        "--calibrate", help="int8-smooth: .spacy pairs to calibrate on (training pairs, not your evaluation pairs)"
    )] = None,
    calibration_pairs: Annotated[int, typer.Option(
        "--calibration-pairs", help="int8-smooth: how many pairs (a seeded sample)")] = DEFAULT_CALIBRATION_PAIRS,
    alpha: Annotated[float, typer.Option(
        "--alpha", help="int8-smooth: how much activation range moves into the weights (0-1)")] = DEFAULT_ALPHA,
):
    """Copy a trained pipeline as one whose transformer runs in int8 on CPU
    (quantized when it is loaded; the fp32 weights are kept). int8-token
    (the default) keeps quality; int8-smooth (calibrated on --calibrate pairs)
    keeps it closer at the same speed; int8 is faster but can break a
    backbone with outlier activations (measure first: studies/run_quantize.py)."""
    done = run_command(quantize, model_dir, output_dir, method, name, calibrate, calibration_pairs, alpha)
    msg.good(
        f"Wrote {output_dir} ('{done['name']}'): {done['quantized_linear_layers']} Linear layers "
        f"int8 when loaded ({', '.join(s + ' = ' + repr(done['setting']) for s in done['settings'])})"
    )
    if done["calibration"]:
        cal = done["calibration"]
        msg.text(f"Activations calibrated on {cal['pairs']} pairs of {cal['data']} (alpha {cal['alpha']}).")
    msg.text(
        f"Load it with spacy.load('{output_dir}'); CPU only, inference only. "
        "Its fp32 weights are kept: config override quantize = \"\" loads the pipeline as trained."
    )
