"""Conversation buffers: the short-term memory patterns of D1 and D4.

Taught in ``notebooks/02_pruning_strategies.ipynb`` and ``notebooks/03_summary_buffer.ipynb``.
"""

from memorykit.buffers.attention import AttentionSelection, AttentionWindow
from memorykit.buffers.base import MessageBuffer
from memorykit.buffers.compression import (
    CompressionPipeline,
    Compressor,
    LLMSummaryCompressor,
    SelectiveCompressor,
)
from memorykit.buffers.context_manager import ContextManager
from memorykit.buffers.policies import (
    BufferWindow,
    FIFOBuffer,
    HybridBuffer,
    ImportanceBuffer,
    RecencyWeightedBuffer,
    TokenBuffer,
    effective_importance_curves,
    recency_weight,
    true_half_life_minutes,
)
from memorykit.buffers.summary_buffer import (SUMMARIZING_NOTICE, SummarizingNotice,
                                              SummaryBuffer, TokenSample)

__all__ = [
    "SUMMARIZING_NOTICE",
    "AttentionSelection",
    "AttentionWindow",
    "BufferWindow",
    "CompressionPipeline",
    "Compressor",
    "ContextManager",
    "FIFOBuffer",
    "HybridBuffer",
    "ImportanceBuffer",
    "LLMSummaryCompressor",
    "MessageBuffer",
    "RecencyWeightedBuffer",
    "SelectiveCompressor",
    "SummarizingNotice",
    "SummaryBuffer",
    "TokenBuffer",
    "TokenSample",
    "effective_importance_curves",
    "recency_weight",
    "true_half_life_minutes",
]
