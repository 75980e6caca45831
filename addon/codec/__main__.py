"""`python -m addon.codec ...` (from a checkout): the same command line as `lgf`."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main(prog=f"python -m {__package__}"))
