r"""The graph a command runs on, from its arguments: a named dataset, a
graph saved with :obj:`torch.save`, or a node table and an edge list."""

import argparse
from typing import TYPE_CHECKING

from pyg_bemap_lab.arguments import fraction
from pyg_bemap_lab.names import DATASET_ALIASES, DATASETS, DEFAULT_FRACTIONS

if TYPE_CHECKING:  # the graphs are read when a command runs
    from torch_geometric.data import Data

#: The options :obj:`--nodes` needs beside it.
TABLE_OPTIONS = ('edges', 'id_col', 'sens_col', 'label_col')

#: The options of a :obj:`torch.save` graph, with their defaults.
GRAPH_OPTIONS = {'sens_attr': 's', 'label_attr': 'y'}

#: The split of a graph of one's own (a named dataset has its own).
FRACTION_OPTIONS = dict(
    zip(('train_fraction', 'val_fraction'), DEFAULT_FRACTIONS)
)


def add_graph_source(
    parser: argparse.ArgumentParser, fractions: bool = True
) -> None:
    r"""Adds :obj:`--dataset`, or a graph of one's own (:obj:`--graph`, or
    :obj:`--nodes` with :obj:`--edges` and the column names), and, with
    :obj:`fractions`, the shares of a stratified split."""
    names = sorted(DATASETS) + sorted(DATASET_ALIASES)
    parser.add_argument(
        '--dataset',
        choices=names,
        default=None,
        metavar='NAME',
        help=f'a named dataset: {", ".join(names)} (default: nba, '
        'bundled, unless a graph of your own is given)',
    )
    own = parser.add_argument_group(
        'a graph of your own (instead of --dataset)'
    )
    own.add_argument(
        '--graph',
        metavar='FILE.pt',
        help='a torch_geometric Data saved with torch.save, with node '
        'features x, edge_index, a sensitive attribute and binary labels',
    )
    own.add_argument(
        '--sens-attr',
        default='s',
        help='the sensitive attribute of --graph (default: %(default)s)',
    )
    own.add_argument(
        '--label-attr',
        default='y',
        help='the labels of --graph: 0, 1, -1 for unlabelled (default: '
        '%(default)s)',
    )
    own.add_argument(
        '--nodes',
        metavar='CSV',
        help='a node table with a header: an id, a sensitive and a label '
        'column; every other column is a numeric feature',
    )
    own.add_argument(
        '--edges',
        metavar='CSV',
        help="an edge list with the header 'source,target' (undirected)",
    )
    own.add_argument('--id-col', help='the id column of --nodes')
    own.add_argument('--sens-col', help='the sensitive column of --nodes')
    own.add_argument('--label-col', help='the label column of --nodes')
    if fractions:
        train, val = DEFAULT_FRACTIONS
        own.add_argument(
            '--train-fraction',
            type=fraction,
            default=train,
            help='share of the labelled nodes to train on, without split '
            'masks; stratified by label and group (default: %(default)s)',
        )
        own.add_argument(
            '--val-fraction',
            type=fraction,
            default=val,
            help='share to validate on; the rest is the test split '
            '(default: %(default)s)',
        )


def check_graph_options(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> None:
    r"""Exits as argparse does when more than one graph is given, a node
    table without the options it needs, or an option of a graph of one's
    own without the option it belongs to (it would be ignored)."""
    if not hasattr(args, 'nodes'):
        return  # the command takes no graph of one's own
    given = [
        name for name in ('dataset', 'graph', 'nodes') if _has(args, name)
    ]
    if len(given) > 1:
        parser.error(
            'give one graph: '
            + ' or '.join(f'--{name}' for name in given)
            + ', not several'
        )
    if args.nodes is not None:
        missing = [o for o in TABLE_OPTIONS if getattr(args, o) is None]
        if missing:
            parser.error(
                '--nodes also needs '
                + ', '.join('--' + o.replace('_', '-') for o in missing)
            )
    stray: list[str] = []
    owners: dict[str, list[str]] = {}
    if args.nodes is None:
        stray += [o for o in TABLE_OPTIONS if getattr(args, o) is not None]
        owners |= dict.fromkeys(TABLE_OPTIONS, ['--nodes'])
    if args.graph is None:
        stray += [o for o, d in GRAPH_OPTIONS.items() if getattr(args, o) != d]
        owners |= dict.fromkeys(GRAPH_OPTIONS, ['--graph'])
    if args.graph is None and args.nodes is None:
        stray += [
            o
            for o, default in FRACTION_OPTIONS.items()
            if getattr(args, o, default) != default
        ]
        owners |= dict.fromkeys(FRACTION_OPTIONS, ['--graph', '--nodes'])
    if stray:
        names = [name for o in stray for name in owners[o]]
        owner = ' or '.join(dict.fromkeys(names))
        verb = 'belongs' if len(stray) == 1 else 'belong'
        parser.error(
            ', '.join('--' + o.replace('_', '-') for o in stray)
            + f' {verb} with {owner}, which is not given'
        )


def read_graph_source(args: argparse.Namespace) -> 'Data | str':
    r"""A graph of one's own (see
    :func:`~pyg_bemap_lab.io.user_graphs.user_graph`) or the name of a
    dataset, from the arguments of :func:`add_graph_source`, checked by
    :func:`check_graph_options`."""
    from pyg_bemap_lab.io.user_graphs import read_graph_file, read_tables

    if args.graph is not None:
        return read_graph_file(args.graph, args.sens_attr, args.label_attr)
    if args.nodes is not None:
        return read_tables(
            args.nodes, args.edges, args.id_col, args.sens_col, args.label_col
        )
    name = args.dataset or 'nba'
    return DATASET_ALIASES.get(name, name)


def named_graph(root: str, name: str) -> 'Data':
    r"""A named dataset's graph, as :func:`read_graph_source`'s graphs of
    one's own are: features, edges, :obj:`s`, :obj:`y` and split masks."""
    from pyg_bemap.datasets import FairGraphDataset
    from pyg_bemap_lab.io.user_graphs import user_graph

    return user_graph(FairGraphDataset(root, name, log=False)[0])


def _has(args: argparse.Namespace, name: str) -> bool:
    return getattr(args, name, None) is not None
