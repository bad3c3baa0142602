"""Entry point of the PyInstaller bundle: the same `main` as the `triton-studio` console script."""

import sys

from studio.cli import main

if __name__ == "__main__":
    sys.exit(main())
