"""``python -m cudbound``: the same as the ``cudbound`` command."""
from .cli import main

__all__: list[str] = []

if __name__ == "__main__":
    raise SystemExit(main())
