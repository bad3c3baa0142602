"""Diffs of configs (no Qt): semantic (by field path, elements matched by name/key), text (side by side with
intra-line spans), framework conversion previews, and file vs the server's resolved config."""

from studio.diff.semantic import CATEGORIES, Change, semantic_diff
from studio.diff.text import DiffRow, side_by_side

__all__ = ["CATEGORIES", "Change", "DiffRow", "semantic_diff", "side_by_side"]
