"""The default model's ONNX graph, as ONNX Runtime runs it fastest on a CPU.

The packaged all-MiniLM-L6-v2 stores its weights as int8 with one scale per output channel,
but as `Cast` and `Mul` nodes in front of each `MatMul`: ONNX Runtime folds them into float
weights when the session starts, so its int8 kernels never run. `int8_model` rebuilds the graph
once, from the installed file and with ONNX Runtime's own tools: the folded float graph, its
transformer fusions (bias + GELU, skip + layer norm), then dynamic quantisation of the weight
`MatMul`s back to int8 per output channel (the same int8 values the package ships), with the
activations quantised per batch at run time. The attention `MatMul`s (activation times
activation) and the feed-forward down-projections stay float (`kept_float`): quantising them
cost the most accuracy for the least time.

The result is cached by the source file's hash, the recipe and ONNX Runtime's version, so it is
derived once per machine in a few seconds; nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Any

log = logging.getLogger("groundwiki_sidecar")

# Changes whenever the derivation below does: the cache key and the embedder's identity.
RECIPE = "fold-fuse-dynq8pc-2"
GELUS = ("Gelu", "BiasGelu", "FastGelu")
HIDDEN = 384
HEADS = 12


class DerivationFailed(Exception):
    """The int8 graph could not be built (a missing tool, an unwritable cache)."""


def cache_dir() -> Path:
    """Where derived models are kept: GROUNDWIKI_MODEL_CACHE, else the user's cache folder."""
    chosen = os.environ.get("GROUNDWIKI_MODEL_CACHE")
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "groundwiki" / "models"


def int8_model(source: Path, source_sha256: str) -> bytes:
    """The graph with int8 kernels, from the cache or derived now (and cached)."""
    import onnxruntime as ort

    name = f"minilm-{source_sha256[:16]}-{RECIPE}-ort{ort.__version__}.onnx"
    folder = cache_dir()
    cached = folder / name
    stamp = cached.with_suffix(".sha256")
    try:
        data = cached.read_bytes()
        if hashlib.sha256(data).hexdigest() == stamp.read_text().strip():
            return data
        log.warning("derived model %s does not match its hash; deriving it again", cached)
    except OSError:
        pass
    started = time.perf_counter()
    data = _derive(source)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _write_atomic(cached, data)
        _write_atomic(stamp, hashlib.sha256(data).hexdigest().encode())
    except OSError as exc:
        # Still usable: it is derived again at the next start.
        log.warning(
            "cannot cache the derived model in %s (%s); it is derived at each start", folder, exc
        )
    log.info("derived the int8 model in %.1f s (%s)", time.perf_counter() - started, cached)
    return data


def _write_atomic(path: Path, data: bytes) -> None:
    # Two sidecars starting at once may both derive: each renames its own complete file.
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".part")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _derive(source: Path) -> bytes:
    try:
        import onnx
        import onnxruntime as ort
        from onnxruntime.quantization import QuantType, quantize_dynamic
        from onnxruntime.transformers.optimizer import optimize_model
    except ImportError as exc:
        raise DerivationFailed(
            f"{exc.name or exc} is missing: pip install 'groundwiki[sidecar]' (make install does this)"
        ) from exc
    with tempfile.TemporaryDirectory(prefix="groundwiki-model-") as work:
        folded = Path(work) / "folded.onnx"
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        options.log_severity_level = 3
        # No thread pool: this runs at start, before the first index build forks its writers.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
        fused = Path(work) / "fused.onnx"
        # Quiet: the optimizer logs each fusion it tries at INFO and WARNING.
        quiet = [logging.getLogger(n) for n in ("onnxruntime", "root", "")]
        levels = [logger.level for logger in quiet]
        for logger in quiet:
            logger.setLevel(logging.ERROR)
        try:
            optimized = optimize_model(
                str(folded), model_type="bert", num_heads=HEADS, hidden_size=HIDDEN, opt_level=0
            )
            optimized.save_model_to_file(str(fused))
            graph = onnx.load(str(fused))
            quantized = Path(work) / "int8.onnx"
            quantize_dynamic(
                fused,
                quantized,
                weight_type=QuantType.QInt8,
                per_channel=True,
                nodes_to_exclude=kept_float(graph),
            )
        except Exception as exc:  # the tools raise many kinds; the caller falls back
            raise DerivationFailed(f"{type(exc).__name__}: {exc}") from exc
        finally:
            for logger, level in zip(quiet, levels, strict=True):
                logger.setLevel(level)
        return quantized.read_bytes()


def kept_float(graph: Any) -> list[str]:
    """The MatMuls left in float: activation times activation (attention scores and their
    weighted sum), and each feed-forward block's down-projection, whose input is the GELU's
    output: its few large values make one uint8 scale per batch too coarse for the rest
    (measured on LISA: mean cosine to the float vectors 0.9949 with it quantised, 0.9974 without,
    at the same speed)."""
    weights = {init.name for init in graph.graph.initializer}
    producer = {out: node for node in graph.graph.node for out in node.output}
    kept = []
    for node in graph.graph.node:
        if node.op_type != "MatMul":
            continue
        source = producer.get(node.input[0])
        after_gelu = source is not None and source.op_type in GELUS
        if after_gelu or not any(name in weights for name in node.input):
            kept.append(node.name)
    return kept
