"""Settings from [tool.neuron-migrate] and the command line; targets; rule selection."""
