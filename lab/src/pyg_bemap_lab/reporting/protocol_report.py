r"""The report of a protocol (:obj:`pyg-bemap reproduce`): the Markdown
tables, the trade-off and paired plots, the tuning grid and curves, and the
comparison with the paper where the reference protocol has runs."""

from dataclasses import dataclass
from functools import partial

from pyg_bemap_lab.reporting.paper_comparison import paper_comparison
from pyg_bemap_lab.reporting.plots import (
    backbone_pairs,
    plot_paired,
    plot_tradeoff,
)
from pyg_bemap_lab.reporting.report import Report, Writer, text_file
from pyg_bemap_lab.reporting.robustness import HEADLINE
from pyg_bemap_lab.reporting.tables import protocol_report
from pyg_bemap_lab.reporting.tuning import plot_curves, tuning_report
from pyg_bemap_lab.running.planning import datasets_with_runs
from pyg_bemap_lab.running.protocols import PROTOCOLS


@dataclass
class ProtocolReport(Report):
    r"""A protocol's report: :obj:`NAME.md` (see
    :func:`~pyg_bemap_lab.reporting.tables.protocol_report`), and, where the
    protocol has them, :obj:`tradeoff_NAME_DATASET.png`,
    :obj:`paired_NAME.png` (and :obj:`paired_NAME_sym.png` for the
    headline pair), :obj:`tuning_NAME.md`, :obj:`curves_NAME.png` and
    :obj:`paper_comparison.md`."""

    def files(self) -> dict[str, Writer]:
        protocol, store, chosen = self.protocol, self.store, self.chosen
        name = protocol.name
        files = {
            f'{name}.md': text_file(
                lambda: protocol_report(protocol, store, chosen)
            )
        }
        if protocol.sweep:
            for dataset in datasets_with_runs(protocol, store):
                files[f'tradeoff_{name}_{dataset}.png'] = partial(
                    plot_tradeoff, protocol, store, chosen, dataset
                )
        pairs = backbone_pairs(protocol)
        if pairs:
            files[f'paired_{name}.png'] = lambda path: plot_paired(
                protocol, store, chosen, path
            )
            if HEADLINE in pairs:
                files[f'paired_{name}_sym.png'] = lambda path: plot_paired(
                    protocol, store, chosen, path, pairs=[HEADLINE]
                )
        if protocol.grid_seeds:
            files[f'tuning_{name}.md'] = text_file(
                lambda: tuning_report(protocol, store, chosen)
            )
            files[f'curves_{name}.png'] = lambda path: plot_curves(
                protocol, store, chosen, path
            )
        reference = PROTOCOLS['reference']
        if datasets_with_runs(reference, store):
            files['paper_comparison.md'] = text_file(
                lambda: paper_comparison(store, reference.datasets)
            )
        return files
