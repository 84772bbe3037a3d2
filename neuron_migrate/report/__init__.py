"""Output formats: one module per format, each a function of the run result."""
