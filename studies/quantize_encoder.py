"""The bare-encoder part of ``run_quantize``: the pipeline's Hugging Face
encoder run directly on the same pairs (tokenized as text pairs, padded per
batch beforehand) as torch fp32, torch int8 (the int8 pipeline's module) and,
when ``onnxruntime`` and ``onnx`` are installed, ONNX Runtime fp32 and dynamic
int8; throughput and the hidden states' difference from torch fp32."""
import statistics
import time
from pathlib import Path
from typing import Dict, List, Tuple

from benchmarks.speed_measure import ratio


def transformer_modules(nlp) -> list:
    """The Hugging Face torch modules of the pipeline's pair transformers."""
    from spacy_paraphrase.encoder.shim import pipeline_transformer_modules

    return pipeline_transformer_modules(nlp)


ENCODER_SYSTEMS = ("torch_fp32", "torch_int8", "ort_fp32", "ort_int8")


def encoder_batches(nlp, docs: list, batch_size: int) -> Tuple[List[Dict], List[str]]:
    """The pairs of ``docs`` tokenized as text pairs by the pipeline's own
    tokenizer, padded per batch (numpy), and the model's input names."""
    from spacy_paraphrase import get_turns

    tokenizer = None
    for _, pipe in nlp.pipeline:
        model = getattr(pipe, "model", None)
        for node in model.walk() if hasattr(model, "walk") else ():
            if getattr(node, "attrs", {}).get("has_transformer") and hasattr(node, "tokenizer"):
                tokenizer = node.tokenizer
                break
        if tokenizer is not None:
            break
    names = [n for n in tokenizer.model_input_names if n in ("input_ids", "attention_mask", "token_type_ids")]
    limit = min(int(tokenizer.model_max_length or 512), 512)
    batches = []
    for i in range(0, len(docs), batch_size):
        turns = [get_turns(doc) for doc in docs[i:i + batch_size]]
        enc = tokenizer([t[0].text for t in turns], [t[1].text for t in turns], padding="longest",
                        truncation=True, max_length=limit, return_tensors="np")
        batches.append({n: enc[n].astype("int64") for n in names})
    return batches, names


def export_onnx(module, batch: Dict, names: List[str], path: Path) -> None:
    """The fp32 encoder as ONNX (TorchScript exporter, dynamic batch and length),
    from a copy (the exporter may leave a module in training mode)."""
    import copy

    import torch

    class Encoder(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, *inputs):
            return self.inner(**dict(zip(names, inputs))).last_hidden_state

    args = tuple(torch.from_numpy(batch[n]) for n in names)
    axes = {n: {0: "batch", 1: "length"} for n in names + ["last_hidden_state"]}
    torch.onnx.export(Encoder(copy.deepcopy(module)).eval(), args, str(path), input_names=names,
                      output_names=["last_hidden_state"], dynamic_axes=axes, opset_version=17, dynamo=False)


def encoder_runners(nlps: Dict, batches: List[Dict], names: List[str], tmp: Path) -> Tuple[Dict, Dict]:
    """System -> function(batch) -> hidden states (numpy), and the systems skipped with why."""
    import torch

    fp32, int8 = transformer_modules(nlps["fp32"])[0], transformer_modules(nlps["int8"])[0]

    def torch_runner(module):
        def run_batch(batch):
            with torch.inference_mode():
                return module(**{n: torch.from_numpy(batch[n]) for n in names}).last_hidden_state.numpy()
        return run_batch

    runners = {"torch_fp32": torch_runner(fp32.eval()), "torch_int8": torch_runner(int8.eval())}
    skipped = {}
    try:
        import onnxruntime
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as err:
        for system in ("ort_fp32", "ort_int8"):
            skipped[system] = f"onnxruntime / onnx not installed ({err}); pip install onnxruntime onnx"
        return runners, skipped
    export_onnx(fp32, batches[0], names, tmp / "encoder.onnx")
    quantize_dynamic(str(tmp / "encoder.onnx"), str(tmp / "encoder.int8.onnx"), weight_type=QuantType.QInt8)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = torch.get_num_threads()
    for system, path in (("ort_fp32", "encoder.onnx"), ("ort_int8", "encoder.int8.onnx")):
        session = onnxruntime.InferenceSession(str(tmp / path), options, providers=["CPUExecutionProvider"])
        runners[system] = (lambda s: lambda batch: s.run(None, batch)[0])(session)
    return runners, skipped


def measure_encoder(nlps: Dict, docs: list, batch_size: int, repeats: int) -> Dict:
    """Bare-encoder throughput of torch fp32 / int8 and ONNX Runtime fp32 / int8."""
    import tempfile

    import numpy

    batches, names = encoder_batches(nlps["fp32"], docs, batch_size)
    with tempfile.TemporaryDirectory(prefix="run_quantize_") as tmp:
        runners, skipped = encoder_runners(nlps, batches, names, Path(tmp))
        sizes = {f.stem.replace(".", "_"): f.stat().st_size / 2**20 for f in Path(tmp).glob("*.onnx")}
        systems = [s for s in ENCODER_SYSTEMS if s in runners]
        outputs = {s: [runners[s](b) for b in batches] for s in systems}  # warm-up, and the outputs
        runs: Dict[str, List[Tuple[float, float]]] = {s: [] for s in systems}
        for k in range(max(1, repeats)):
            order = systems[k % len(systems):] + systems[:k % len(systems)]
            for system in order:
                c0, t0 = time.process_time(), time.perf_counter()
                for batch in batches:
                    runners[system](batch)
                runs[system].append((time.perf_counter() - t0, time.process_time() - c0))
    out: Dict[str, Dict] = {}
    for system in systems:
        walls, cpus = [w for w, _ in runs[system]], [c for _, c in runs[system]]
        diffs = numpy.concatenate([
            numpy.abs(a - b)[mask.astype(bool)].ravel()
            for a, b, mask in zip(outputs[system], outputs["torch_fp32"], (b["attention_mask"] for b in batches))
        ])
        out[system] = {
            "pairs_per_s": len(docs) / statistics.median(walls),
            "pairs_per_cpu_s": len(docs) / statistics.median(cpus),
            "seconds": walls,
            "hidden_abs_diff_vs_torch_fp32": {"max": float(diffs.max()), "mean": float(diffs.mean())},
        }
    for system, why in skipped.items():
        out[system] = {"skipped": why}
    base = out["torch_fp32"]["pairs_per_s"]
    speedups = {f"{s}_over_torch_fp32": ratio(out[s]["pairs_per_s"], base) for s in systems if s != "torch_fp32"}
    return {"systems": out, "speedups": speedups, "onnx_file_mb": sizes,
            "n_batches": len(batches), "inputs": names}
