r"""Every method of the laboratory, registered once: its layers, its
training graph, the backbone it is compared with and its short name on the
command line. The backbones, the aliases and the default protocol's list
are read from here. No torch: the command line reads it before anything
heavy is imported."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Method:
    r"""One method.

    Args:
        name (str): The name tables and stored runs show.
        layer (str): The layers of the node classifier
            (:class:`~pyg_bemap_lab.running.models.NodeClassifier`):
            :obj:`'mlp'`, :obj:`'gcn'`, :obj:`'sage'`, :obj:`'gat'` or
            :obj:`'row'` (row-normalised aggregation).
        graph (str, optional): The training graph: :obj:`None` for the full
            graph, a BeMap strategy (:obj:`'balance'`, :obj:`'uniform'`,
            :obj:`'degree'`), :obj:`'fairdrop'` (see
            :func:`~pyg_bemap_lab.running.fairdrop.fairdrop_edge`) or
            :obj:`'renumbered'` (BeMap's sample renumbered as the
            reference code's training graph, a diagnostic of its defect,
            see :mod:`~pyg_bemap_lab.running.renumbering`).
        backbone (str, optional): The method it is compared with, whose
            tuned hyper-parameters it keeps; :obj:`None` for a backbone.
        alias (str, optional): Its short name on the command line.
        evaluated (bool): Whether the default protocol evaluates it.
    """

    name: str
    layer: str
    graph: str | None = None
    backbone: str | None = None
    alias: str | None = None
    evaluated: bool = True


REGISTRY = (
    Method('MLP', 'mlp'),
    Method('GCN', 'gcn'),
    Method('SAGE', 'sage'),
    Method('GAT', 'gat'),
    Method('BeMap(row)', 'row', 'balance', 'GCN', 'row'),
    Method('BeMap(sym)', 'gcn', 'balance', 'GCN', 'sym'),
    Method('BeMap(sage)', 'sage', 'balance', 'SAGE', 'sage'),
    Method('BeMap(gat)', 'gat', 'balance', 'GAT', 'gat'),
    Method('BeMap(sym)-uniform', 'gcn', 'uniform', 'GCN', 'sym-uniform'),
    Method('BeMap(sym)-degree', 'gcn', 'degree', 'GCN', 'sym-degree'),
    Method('FairDrop', 'gcn', 'fairdrop', 'GCN'),
    Method('BeMap(sym)-renumbered', 'gcn', 'renumbered', 'GCN', None, False),
)

#: Every method by name.
METHODS = {method.name: method for method in REGISTRY}

#: The backbone of every method with another training graph.
BACKBONES = {m.name: m.backbone for m in REGISTRY if m.backbone is not None}

#: The short names of the BeMap methods on the command line.
METHOD_ALIASES = {m.alias: m.name for m in REGISTRY if m.alias is not None}

#: The methods the default protocol evaluates.
ALL_METHODS = tuple(m.name for m in REGISTRY if m.evaluated)
