r"""Input and output: the run store and graphs of one's own."""
