r"""Running: the models, the training loop, protocols and their
execution."""
