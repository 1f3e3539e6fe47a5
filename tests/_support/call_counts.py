"""Counting the parts a refit method receives (tests of cudbound.refit: which parts reach the one-part path)."""
import numpy as np


def count_rows(monkeypatch, cls, name):
    """Record the number of parts (rows of the first argument) each call of cls.name receives."""
    sent, original = [], getattr(cls, name)

    def counted(self, W, *args, **kwargs):
        sent.append(1 if np.ndim(W) == 1 else len(W))
        return original(self, W, *args, **kwargs)
    monkeypatch.setattr(cls, name, counted)
    return sent
