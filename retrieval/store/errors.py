"""The store's refusals: one message each, naming the store, nothing in it changed."""

from __future__ import annotations

from ..core.errors import InputError


class StoreError(InputError):
    """A store that cannot be opened, read or written: one message, naming it; nothing in it changed."""


class Forbidden(StoreError):
    """A change this person may not make (`access`): refused, naming who may; the store as it was."""


class StoreFull(StoreError):
    """A write that would take the stored files beyond the store's size limit: refused, the store as it was."""
