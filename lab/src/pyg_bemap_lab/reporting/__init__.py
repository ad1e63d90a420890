r"""Reporting: tables, plots, statistics and the reports of every
command, read from the stored runs."""
