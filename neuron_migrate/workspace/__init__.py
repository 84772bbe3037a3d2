"""The files of a run: discovery, file kinds, the cache."""
