"""Root conftest: puts `tests/` on sys.path so shared support modules import by name."""
