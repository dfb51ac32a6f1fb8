"""The retriever lab's engine: datasets, tokeniser, BM25, LSA, fusions, metrics, bootstrap and diagnosis (no Streamlit here)."""

from .errors import InputError

__all__ = ["InputError"]
