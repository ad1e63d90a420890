r"""The reference code's training-graph renumbering, reproduced as a
diagnostic of a defect, never a default.

Every training epoch, the reference script builds the sampled graph with
:obj:`dgl.edge_subgraph(graph, edge_ids)`, whose default
:obj:`relabel_nodes=True` gives the nodes new ids in order of first
appearance in the sampled edges' source array followed by their target
array. The feature and label rows keep the old ids, so training runs on a
graph whose node ids do not match the features (evaluation uses the true
graph). :func:`renumber_like_reference` applies the same renumbering to a
sampled edge list, so that its effect can be measured with this library.
"""

import torch
from torch import Tensor
from torch_geometric.utils import remove_self_loops


def reference_edge_order(edge_index: Tensor, sens: Tensor) -> Tensor:
    r"""The sampled edges (:obj:`[2, E]`, without self-loops) as the
    reference script lists them: target node by target node, ascending;
    for each target its kept neighbours of group 0, then of group 1, then
    the target itself (a self-loop every node has). Neighbours of one
    group keep their order in :obj:`edge_index`.

    Returns:
        The :obj:`[2, E + N]` edges, self-loops included.
    """
    num_nodes = sens.numel()
    loops = torch.arange(num_nodes, device=edge_index.device)
    edges = torch.cat([edge_index, loops.repeat(2, 1)], dim=1)
    source, target = edges
    num_slots = int(sens.max()) + 2 if num_nodes else 1  # groups, then self
    slot = torch.where(source == target, num_slots - 1, sens[source])
    order = torch.sort(target * num_slots + slot, stable=True).indices
    return edges[:, order]


def first_appearance_ids(edge_index: Tensor, num_nodes: int) -> Tensor:
    r"""DGL's relabelling: the new id of every node, given in order of
    first appearance in :obj:`edge_index[0]` followed by
    :obj:`edge_index[1]`. Nodes that do not appear come last, in id order
    (the reference's graphs have none: every node keeps its self-loop).
    """
    sequence = edge_index.reshape(-1)  # the sources, then the targets
    first = torch.full(
        (num_nodes,),
        sequence.numel(),
        dtype=torch.long,
        device=sequence.device,
    )
    position = torch.arange(sequence.numel(), device=sequence.device)
    first = first.scatter_reduce(0, sequence, position, 'amin')
    by_appearance = torch.sort(first, stable=True).indices
    new_id = torch.empty_like(by_appearance)
    new_id[by_appearance] = torch.arange(num_nodes, device=new_id.device)
    return new_id


def renumber_like_reference(edge_index: Tensor, sens: Tensor) -> Tensor:
    r"""The sampled edges renumbered as the reference script's training
    graph is: ordered by :func:`reference_edge_order`, then every id
    :math:`i` replaced with :func:`first_appearance_ids`'s :math:`\pi(i)`.
    The features of node :math:`i` then meet the neighbourhood of node
    :math:`\pi^{-1}(i)`.

    Self-loops map to self-loops under any renumbering, so they are left
    out of the result for the layer to add, as it does for any graph.

    Args:
        edge_index (torch.Tensor): The sampled edges, :obj:`[2, E]`,
            without self-loops.
        sens (torch.Tensor): The sensitive group of every node, :obj:`[N]`.

    Returns:
        The renumbered edges, :obj:`[2, E]`, in the reference's order.
    """
    ordered = reference_edge_order(edge_index, sens)
    new_id = first_appearance_ids(ordered, sens.numel())
    renumbered, _ = remove_self_loops(new_id[ordered])
    return renumbered
