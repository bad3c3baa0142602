"""Qt widgets. The only package that imports Qt."""
