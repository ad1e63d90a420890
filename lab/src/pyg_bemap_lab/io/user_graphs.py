r"""Graphs of one's own for the lab's commands: a saved
:class:`~torch_geometric.data.Data`, or a node table and an edge list,
checked once and brought to the form the protocols train on (features
:obj:`x`, edges, groups :obj:`s`, binary labels :obj:`y` and, when given,
the split masks), with a stratified split for graphs without masks."""

import hashlib
import os.path as osp
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import Tensor
from torch_geometric.data import Data, Dataset
from torch_geometric.utils import coalesce, remove_self_loops, to_undirected

from pyg_bemap.datasets import ALIASES, SPECS
from pyg_bemap.metrics import fairness_task
from pyg_bemap_lab.io.store import writable_folder
from pyg_bemap_lab.names import DEFAULT_FRACTIONS, leaves_a_test_split

#: The split masks a graph may bring, used for every seed when all three
#: are present.
MASKS = ('train_mask', 'val_mask', 'test_mask')


def user_graph(
    data: Data, sens_attr: str = 's', label_attr: str = 'y'
) -> Data:
    r"""The graph the protocols train on, from any
    :class:`~torch_geometric.data.Data` with node features :obj:`x`, an
    :obj:`edge_index`, a sensitive attribute and binary labels (-1 for an
    unlabelled node): a new graph with :obj:`x` (float), :obj:`edge_index`,
    :obj:`s` (groups :math:`0, \ldots, G - 1`), :obj:`y` and the three
    split masks if :obj:`data` has them. :obj:`data` is not changed.

    Raises:
        ValueError: Naming what is missing or wrong, and what to do.
    """
    x = getattr(data, 'x', None)
    if not isinstance(x, Tensor) or x.dim() != 2:
        raise ValueError(
            "The graph needs node features 'data.x', a [num_nodes, F] "
            'tensor; give every node at least one feature'
        )
    task = fairness_task(data, sens_attr, label_attr)
    if x.size(0) != task.sens.numel():
        raise ValueError(
            "The graph needs node features 'data.x', a [num_nodes, F] "
            'tensor; give every node at least one feature'
        )
    if x.size(1) == 0:
        raise ValueError(
            "The node features 'data.x' have no columns; give every node at "
            'least one feature'
        )
    x = x.float()
    if not torch.isfinite(x).all():
        raise ValueError(
            "The node features 'data.x' hold NaN or infinite values; fill "
            'or drop them first'
        )
    _check_question(task.edge_index, task.labels, label_attr)
    graph = Data(x=x, edge_index=task.edge_index, s=task.sens, y=task.labels)
    for name, mask in _checked_masks(data, task.labels).items():
        graph[name] = mask
    return graph


def _check_question(edges: Tensor, labels: Tensor, label_attr: str) -> None:
    r"""Raises unless the graph can pose the question "does BeMap change
    the gaps?": edges other than self-loops, and both label classes."""
    if not bool((edges[0] != edges[1]).any()):
        raise ValueError(
            'The graph has no edges (other than self-loops): BeMap samples '
            'neighbourhoods and is GCN without them, so there is nothing '
            'to compare; give the graph its edges'
        )
    classes = torch.unique(labels[labels >= 0]).numel()
    if classes < 2:
        raise ValueError(
            f"The labelled nodes of 'data.{label_attr}' hold one class "
            'only: a classifier and its fairness gaps need both 0 and 1'
        )


def _checked_masks(data: Data, labels: Tensor) -> dict[str, Tensor]:
    given = [name for name in MASKS if getattr(data, name, None) is not None]
    if not given:
        return {}
    if len(given) < len(MASKS):
        missing = [name for name in MASKS if name not in given]
        raise ValueError(
            f'The graph has {", ".join(given)} but not {", ".join(missing)}: '
            'give all three split masks, or none for a stratified split'
        )
    masks = {}
    for name in MASKS:
        mask = data[name]
        num_nodes = labels.numel()
        if (
            not isinstance(mask, Tensor)
            or mask.dtype != torch.bool
            or (tuple(mask.shape) not in ((num_nodes,), (num_nodes, 1)))
        ):
            raise ValueError(
                f"'data.{name}' must be a boolean mask of shape [{num_nodes}] "
                f'or [{num_nodes}, 1], one entry per node (got '
                f'{_described_mask(mask)})'
            )
        mask = mask.view(-1)
        if not mask.any() or (labels[mask] < 0).any():
            raise ValueError(
                f"'data.{name}' must select at least one node, and labelled "
                'nodes only'
            )
        masks[name] = mask
    for i, first in enumerate(MASKS):
        for second in MASKS[i + 1 :]:
            shared = int((masks[first] & masks[second]).sum())
            if shared:
                raise ValueError(
                    f"'data.{first}' and 'data.{second}' share {shared} "
                    'node(s): metrics on one would be computed on the '
                    'other; give three disjoint masks'
                )
    return masks


def _described_mask(mask: Any) -> str:
    if isinstance(mask, Tensor):
        return f'{mask.dtype} of shape {list(mask.shape)}'
    return type(mask).__name__


def _check_splits(graph: Data) -> None:
    r"""Raises unless each split mask, where the graph has them, can play
    its part: both classes to train and to select epochs on, and two groups
    or more to measure gaps on."""
    if 'train_mask' not in graph:
        return
    labels, sens = graph.y, graph.s
    for name in ('train_mask', 'val_mask'):
        if torch.unique(labels[graph[name]]).numel() < 2:
            raise ValueError(
                f"'data.{name}' selects nodes of one class only: training "
                'and the validation loss and AUC that pick the epoch need '
                'both classes; give the split nodes of both'
            )
    if torch.unique(sens[graph.test_mask]).numel() < 2:
        raise ValueError(
            "'data.test_mask' selects nodes of one sensitive group only: "
            'the fairness gaps compare groups; give the test split nodes of '
            'every group'
        )


def read_graph_file(
    path: str, sens_attr: str = 's', label_attr: str = 'y'
) -> Data:
    r"""The :func:`user_graph` of a :class:`~torch_geometric.data.Data`
    saved with :obj:`torch.save` (a dataset's first graph is taken too)."""
    try:
        data = torch.load(path, weights_only=False)
    except FileNotFoundError:
        raise
    except Exception as error:
        raise ValueError(
            f'{path}: not a graph saved with torch.save ({error})'
        ) from None
    if isinstance(data, (Dataset, list, tuple)) and len(data) > 0:
        data = data[0]
    if not isinstance(data, Data):
        raise ValueError(
            f'{path} holds a {type(data).__name__}, not a '
            'torch_geometric.data.Data: save the graph itself'
        )
    return user_graph(data, sens_attr, label_attr)


def read_tables(
    nodes: str,
    edges: str,
    id_col: str,
    sens_col: str,
    label_col: str,
) -> Data:
    r"""The :func:`user_graph` of a node table and an edge list, both CSV
    files with a header.

    The node table has one row per node: the id, sensitive and label
    columns, and numeric feature columns (every other column). Groups may
    be any values (sorted, they become :math:`0, \ldots, G - 1`); labels are
    0 and 1 (an empty label marks an unlabelled node). The edge list has
    the header :obj:`source,target` and one edge per row, in either
    direction: the graph is undirected, without self-loops.

    Raises:
        ValueError: Naming the file, column or line at fault.
    """
    table = _read_csv(nodes)
    if table.empty:
        raise ValueError(f'{nodes}: the table has a header but no rows')
    for column in (id_col, sens_col, label_col):
        if column not in table.columns:
            raise ValueError(
                f'{nodes}: no column {column!r} (its columns: '
                f'{", ".join(map(str, table.columns))})'
            )
    ids = pd.Index(table[id_col])
    if ids.has_duplicates:
        twice = ids[ids.duplicated()][0]
        twice = twice.item() if hasattr(twice, 'item') else twice
        raise ValueError(f'{nodes}: the id {twice!r} is on two rows')
    features = table.drop(columns=[id_col, sens_col, label_col])
    _check_features(features, nodes)
    if table[sens_col].isna().any():
        line = int(table[sens_col].isna().to_numpy().argmax()) + 2
        raise ValueError(f'{nodes}: line {line}: no {sens_col!r} value')
    sens = _groups(table[sens_col], nodes, sens_col)
    if sens.max(initial=0) < 1:
        raise ValueError(
            f'{nodes}: the column {sens_col!r} holds one group only: there '
            'is nothing to balance or compare; give --sens-col the column '
            'that holds the groups'
        )
    labels = table[label_col]
    if pd.api.types.is_numeric_dtype(labels):  # else refused as not binary
        labels = labels.fillna(-1)
    _check_labels(labels, nodes, label_col)
    data = Data(
        x=torch.tensor(features.to_numpy(dtype='float32')),
        edge_index=_read_edges(edges, ids, nodes, id_col),
        s=torch.tensor(sens),
        y=torch.tensor(labels.to_numpy(dtype='float64')),
    )
    return user_graph(data)


def _groups(column: pd.Series, nodes: str, sens_col: str) -> np.ndarray:
    r"""The group of every row, :math:`0, \ldots, G - 1` in the order of
    the sorted values, from a column of categories."""
    numeric = pd.api.types.is_numeric_dtype(column)
    if numeric and not np.isfinite(column).all():
        raise ValueError(
            f'{nodes}: the column {sens_col!r} holds infinite values; every '
            'node needs a known group'
        )
    if numeric and not (column == column.round()).all():
        raise ValueError(
            f'{nodes}: the column {sens_col!r} holds non-integral values; '
            'groups are categories (binarise or bucket a continuous '
            'attribute first)'
        )
    groups = pd.factorize(column, sort=True)[0]
    if len(groups) > 2 and groups.max() + 1 == len(groups):
        raise ValueError(
            f'{nodes}: the column {sens_col!r} holds a different value on '
            'every row; groups are categories shared by nodes: give '
            '--sens-col the column that holds the groups'
        )
    return groups


def _check_labels(labels: pd.Series, nodes: str, label_col: str) -> None:
    binary = (
        pd.api.types.is_numeric_dtype(labels) and labels.isin([0, 1, -1]).all()
    )
    if not binary:
        raise ValueError(
            f'{nodes}: the labels in {label_col!r} must be binary, 0 or 1 '
            '(empty for an unlabelled node); map them to 0 and 1 first'
        )
    if labels[labels >= 0].nunique() < 2:
        raise ValueError(
            f'{nodes}: the labelled rows of {label_col!r} hold one class '
            'only: a classifier and its fairness gaps need both 0 and 1'
        )


def _read_csv(path: str) -> pd.DataFrame:
    if not osp.exists(path):
        raise FileNotFoundError(f'{path}: no such file')
    try:
        return pd.read_csv(path)
    except (pd.errors.ParserError, UnicodeDecodeError) as error:
        raise ValueError(f'{path}: not a CSV table ({error})') from None
    except pd.errors.EmptyDataError:
        raise ValueError(f'{path}: the file is empty') from None


def _check_features(features: pd.DataFrame, nodes: str) -> None:
    if features.shape[1] == 0:
        raise ValueError(
            f'{nodes}: no feature columns; every column but the id, '
            'sensitive and label columns is a feature'
        )
    text = [
        str(c)
        for c in features.columns
        if not pd.api.types.is_numeric_dtype(features[c])
    ]
    if text:
        raise ValueError(
            f'{nodes}: the feature column(s) {", ".join(map(repr, text))} '
            'are not numeric; drop them or encode them as numbers'
        )
    empty = [str(c) for c in features.columns if features[c].isna().any()]
    if empty:
        raise ValueError(
            f'{nodes}: the feature column(s) {", ".join(map(repr, empty))} '
            'have empty cells; fill or drop them'
        )
    infinite = [
        str(c) for c in features.columns if np.isinf(features[c]).any()
    ]
    if infinite:
        raise ValueError(
            f'{nodes}: the feature column(s) '
            f'{", ".join(map(repr, infinite))} hold infinite values; '
            'replace or drop them'
        )


def _read_edges(path: str, ids: pd.Index, nodes: str, id_col: str) -> Tensor:
    table = _read_csv(path)
    if list(table.columns[:2]) != ['source', 'target']:
        raise ValueError(
            f"{path}: the edge list needs the header 'source,target' (got "
            f'{",".join(map(str, table.columns))})'
        )
    ends = [ids.get_indexer(table[end]) for end in ('source', 'target')]
    for end, index in zip(('source', 'target'), ends):
        missing = (index < 0).nonzero()[0]
        if len(missing):
            row = int(missing[0])
            value = table[end].iloc[row]
            value = value.item() if hasattr(value, 'item') else value
            raise ValueError(
                f'{path}: line {row + 2}: the {end} id {value!r} is not in '
                f'the node table {nodes} (column {id_col!r}; '
                f'{len(missing)} such row{"s" if len(missing) > 1 else ""})'
            )
    edge_index = torch.from_numpy(np.stack(ends)).long()
    edge_index, _ = remove_self_loops(edge_index)
    edge_index = to_undirected(edge_index, num_nodes=len(ids))
    return coalesce(edge_index, num_nodes=len(ids))


def graph_for_runs(
    data: Data | str, folder: str, sens_attr: str = 's', label_attr: str = 'y'
) -> tuple[str, str | None]:
    r"""The name under which a protocol's runs of :obj:`data` are stored,
    and the file its worker processes read: a named dataset's name and
    :obj:`None`, or the :func:`graph_key` of a graph of one's own (checked
    by :func:`user_graph`), saved in :obj:`folder` once."""
    if isinstance(data, str):
        name = ALIASES.get(data, data)
        if name not in SPECS:
            raise ValueError(
                f'unknown dataset {data!r}; choose from {", ".join(SPECS)}'
            )
        return name, None
    graph = user_graph(data, sens_attr, label_attr)
    _check_labelled_groups(graph.y, graph.s)
    _check_splits(graph)
    name = graph_key(graph)
    path = osp.join(writable_folder(folder), f'{name}.pt')
    if not osp.exists(path):
        torch.save(graph, path)
    return name, path


def _check_labelled_groups(labels: Tensor, sens: Tensor) -> None:
    r"""Raises unless every group has labelled nodes, on which a trained
    model's gaps are measured (:func:`user_graph` takes such a graph, and
    such splits, which a description of its bias can still read)."""
    unlabelled = [
        int(g)
        for g in torch.unique(sens)
        if not (labels[sens == g] >= 0).any()
    ]
    if unlabelled:
        raise ValueError(
            f'The sensitive group(s) {unlabelled} have no labelled node: '
            'the fairness gaps compare the groups on labelled nodes; label '
            'some nodes of every group'
        )


def graph_key(data: Data) -> str:
    r"""A name of the graph drawn from its content (features, edges,
    groups, labels and masks): the same graph gets the same name, so that
    its stored runs are found again."""
    digest = hashlib.sha256()
    for name in ('x', 'edge_index', 's', 'y', *MASKS):
        value = getattr(data, name, None)
        if value is not None:
            digest.update(name.encode())
            digest.update(value.contiguous().cpu().numpy().tobytes())
    return f'graph-{digest.hexdigest()[:12]}'


def check_fractions(fractions: tuple[float, float]) -> tuple[float, float]:
    r"""Returns the training and validation shares if both are positive and
    leave a test split, else raises a :class:`ValueError`."""
    train, val = fractions
    if not leaves_a_test_split(train, val):
        raise ValueError(
            'the training and validation fractions must be positive with a '
            f'sum below 1, leaving a test split (got {train} and {val})'
        )
    return train, val


def stratified_masks(
    y: Tensor,
    sens: Tensor,
    seed: int,
    fractions: tuple[float, float] = DEFAULT_FRACTIONS,
) -> tuple[Tensor, Tensor, Tensor]:
    r"""A seeded split of the labelled nodes (:obj:`y >= 0`) that keeps the
    share of every (label, group) stratum in each split: of each stratum's
    :math:`n` nodes, :math:`\lfloor f_{train} n \rceil` train, the next
    :math:`\lfloor (f_{train} + f_{val}) n \rceil` validate, the rest
    test."""
    train, val = check_fractions(fractions)
    gen = torch.Generator().manual_seed(seed)
    labelled = (y >= 0).nonzero().view(-1)
    labelled = labelled[torch.randperm(labelled.numel(), generator=gen)]
    stratum = y[labelled] * (int(sens.max()) + 1) + sens[labelled]
    stratum, order = torch.sort(stratum, stable=True)
    labelled = labelled[order]
    _, counts = torch.unique_consecutive(stratum, return_counts=True)
    start = torch.cumsum(counts, 0) - counts
    rank = torch.arange(labelled.numel()) - start.repeat_interleave(counts)
    size = counts.repeat_interleave(counts).double()
    bounds = (torch.round(train * size), torch.round((train + val) * size))
    masks = []
    for chosen in (
        rank < bounds[0],
        (rank >= bounds[0]) & (rank < bounds[1]),
        rank >= bounds[1],
    ):
        mask = torch.zeros(y.numel(), dtype=torch.bool)
        mask[labelled[chosen]] = True
        masks.append(mask)
    return masks[0], masks[1], masks[2]
