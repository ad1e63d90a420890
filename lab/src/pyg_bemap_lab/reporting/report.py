r"""One report pipeline for every command: a :class:`Report` reads a
protocol's stored runs and the configurations chosen, gives a summary for
the terminal (:obj:`str`) and writes its files into a folder
(:meth:`Report.write`). :obj:`reproduce` (the protocol's report, or the
robustness study's), :obj:`compare` and :obj:`sweep` differ only in the
report they make."""

import os.path as osp
from collections.abc import Callable
from dataclasses import dataclass

from pyg_bemap_lab.io.store import RunStore, writable_folder
from pyg_bemap_lab.reporting.code_versions import code_versions_section
from pyg_bemap_lab.run_config import Chosen
from pyg_bemap_lab.running.planning import datasets_with_runs
from pyg_bemap_lab.running.protocols import Protocol

#: Writes one file at the path it is given.
Writer = Callable[[str], None]


@dataclass
class Report:
    r"""What a command shows of the stored runs of :obj:`protocol`.

    Attributes:
        protocol (Protocol): How the runs were made.
        store (RunStore): Where they are.
        chosen (dict): The configuration of each (dataset, method).
    """

    protocol: Protocol
    store: RunStore
    chosen: Chosen

    def __str__(self) -> str:
        datasets = datasets_with_runs(self.protocol, self.store)
        return (
            f'protocol {self.protocol.name!r}: runs of '
            f'{", ".join(datasets) or "no dataset"} in {self.store.path}'
        )

    def files(self) -> dict[str, Writer]:
        r"""File name -> the function that writes it (none by default)."""
        return {}

    def write(self, out: str) -> list[str]:
        r"""Writes :meth:`files` into the folder :obj:`out` and returns
        their paths. A Markdown file ends with the code versions of the
        runs it read (:mod:`~pyg_bemap_lab.reporting.code_versions`)."""
        writable_folder(out)
        paths = []
        for name, write in self.files().items():
            path = osp.join(out, name)
            with self.store.reading() as keys:
                write(path)
            if name.endswith('.md'):
                runs = [self.store.get(key) for key in sorted(keys)]
                with open(path, 'a') as handle:
                    handle.write(code_versions_section(filter(None, runs)))
            paths.append(path)
        return paths


def text_file(make: Callable[[], str]) -> Writer:
    r"""The writer of a text file whose content :obj:`make` gives."""

    def write(path: str) -> None:
        text = make()
        with open(path, 'w') as handle:
            handle.write(text)

    return write
