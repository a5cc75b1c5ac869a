"""Moved to ``spacy_paraphrase.encoder`` (re-exported here until the modules
that import this one have moved)."""
from .encoder.architectures import (  # noqa: F401
    create_inline_pair_transformer,
    create_pair_listener,
    create_pair_transformer_model,
)
from .encoder.batching import DEFAULT_MAX_PADDING, MIN_GROUP_PIECES, padding_groups, run_transformer  # noqa: F401
from .encoder.model import (  # noqa: F401
    DEFAULT_MAX_LENGTH,
    PairTransformerBatch,
    PairTransformerModel,
    TruncationWarning,
    check_transformer_output,
    get_max_length,
    pair_forward,
    pair_init,
    whole_doc_spans,
)
from .encoder.plan import encode_pairs  # noqa: F401
from .encoder.shim import limit_threads_in_worker  # noqa: F401
from .encoder.windows import pair_windows, token_windows  # noqa: F401
