"""``python -m cudbound``: the same as the ``cudbound`` command."""
from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
