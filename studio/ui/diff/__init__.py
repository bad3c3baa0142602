"""Diff: side-by-side text with intra-line highlights and the semantic table. Paints what studio.diff computes."""
