from torch import Tensor
from torch_geometric.data import Data, HeteroData
from torch_geometric.transforms import BaseTransform

from pyg_bemap.bemap_info import BeMapInfo
from pyg_bemap.edge_index import carrier_of
from pyg_bemap.infra.checks import check_integer, check_memory_budget
from pyg_bemap.infra.compat import plain_tensor
from pyg_bemap.rules.balance import checked_balance_score
from pyg_bemap.rules.counts import (
    DEFAULT_MEMORY_BUDGET,
    check_counting,
    checked_hop_group_counts,
)
from pyg_bemap.rules.groups import (
    check_edge_index,
    check_same_device,
    sensitive_groups,
)
from pyg_bemap.settings import SamplerSettings


class BalanceAwareSampling(BaseTransform):
    r"""Prepares a graph for BeMap, from the `"BeMap: Balanced Message Passing
    for Fair Graph Neural Network" <https://arxiv.org/abs/2306.04107>`_ paper:
    counts the members of every sensitive group within :math:`L` hops of each
    node, scores how balanced that neighbourhood is, and lets the graph carry
    what :class:`~pyg_bemap.BeMapConv` needs to sample fair neighbourhoods.

    .. math::
        b_i = \frac{1}{D_i + \delta}, \qquad
        D_i = \sqrt{\frac{2}{G (G-1)} \sum_{g < h}
        (\mathrm{count}_{i,g} - \mathrm{count}_{i,h})^2}

    (see :func:`~pyg_bemap.hop_group_counts` and
    :func:`~pyg_bemap.balance_score`). Writes

    * :obj:`data.bemap_count`: group counts, :obj:`torch.long`
      :obj:`[N, G]`;
    * :obj:`data.bemap_balance`: balance scores, float :obj:`[N]`;
    * :obj:`data.edge_index`: the same edges as a
      :class:`~pyg_bemap.BeMapEdgeIndex` carrying groups and balance scores,
      with the edges already grouped for the sampler.

    Use it as a :obj:`pre_transform` (or call it once): it is exact and does
    all the per-graph work. Apply it after every step that changes the
    edges (e.g. :class:`~torch_geometric.transforms.ToUndirected`), since
    the balance scores describe the edges it sees; self-loops are never
    sampled, so leave them (and :class:`~torch_geometric.transforms.GCNNorm`'s
    normalisation) to the layer. Steps that rebuild :obj:`data.edge_index`
    afterwards (batching, :obj:`subgraph`, a dataset of several graphs,
    which concatenates them) keep :obj:`bemap_count` and
    :obj:`bemap_balance` but drop the carrier;
    :obj:`AttachBeMap(sens_attr=...)` re-attaches them: a
    :obj:`NeighborLoader`'s :obj:`transform=`, or called on each batch of a
    :obj:`DataLoader` (:obj:`batch = attach(batch)`; a dataset's own
    :obj:`transform=` is undone when the loader collates its graphs).
    For a dataset of several graphs, also pass :obj:`num_groups`, so that a
    graph missing a group gets counts of the same shape as the others.

    Args:
        sens_attr (str, optional): The node attribute holding the sensitive
            group (integers :math:`0, \ldots, G-1`). (default: :obj:`'s'`)
        num_hops (int, optional): The number of hops :math:`L`, usually the
            number of message-passing layers. (default: :obj:`2`)
        delta (float, optional): The smoothing term :math:`\delta > 0`.
            (default: :obj:`1.0`)
        num_groups (int, optional): The number of groups :math:`G`; needed
            for datasets of several graphs. (default: :obj:`None`, inferred
            from the attribute, which must then hold every group
            :math:`0, \ldots, G-1`, with :math:`G \geq 2`)
        counting (str, optional): :obj:`'exact'` distinct-node counts, or
            :obj:`'walks'`, a cheaper upper bound counting walks.
            (default: :obj:`'exact'`)
        memory_budget (int, optional): Working memory of exact counting, in
            bytes. (default: :obj:`2**28`, 256 MiB)
        settings (SamplerSettings, optional): :obj:`num_hops` and
            :obj:`delta` as one value, shared with the model's
            :class:`~pyg_bemap.BeMapConv` layers, instead of the two
            keywords. (default: :obj:`None`)
    """

    def __init__(
        self,
        sens_attr: str = 's',
        num_hops: int | None = None,
        delta: float | None = None,
        num_groups: int | None = None,
        counting: str = 'exact',
        memory_budget: int = DEFAULT_MEMORY_BUDGET,
        settings: SamplerSettings | None = None,
    ):
        self.settings = SamplerSettings.resolve(
            settings, num_hops=num_hops, delta=delta
        )
        if num_groups is not None:
            check_integer('num_groups', num_groups, minimum=1)
        self.sens_attr = sens_attr
        self.num_groups = num_groups
        self.counting = check_counting(counting)
        self.memory_budget = check_memory_budget(memory_budget)

    @property
    def num_hops(self) -> int:
        r""":obj:`settings.num_hops`."""
        return self.settings.num_hops

    @property
    def delta(self) -> float:
        r""":obj:`settings.delta`."""
        return self.settings.delta

    def forward(self, data: Data | HeteroData) -> Data:
        if isinstance(data, HeteroData):
            raise NotImplementedError(
                'BalanceAwareSampling supports homogeneous graphs only; '
                "convert with 'data.to_homogeneous()' first"
            )
        if data.edge_index is None:
            raise ValueError(
                "BalanceAwareSampling needs 'data.edge_index'; apply it "
                "before transforms such as 'ToSparseTensor'"
            )
        attribute: Tensor = getattr(data, self.sens_attr, None)  # type: ignore[assignment]
        edges = plain_tensor(data.edge_index)
        num_nodes = check_edge_index(edges, data.num_nodes)
        sens, num_groups = sensitive_groups(
            attribute, num_nodes, self.num_groups, self.sens_attr
        )
        check_same_device(edge_index=edges, sens=sens)
        if num_groups < 2:
            raise ValueError(
                f"The sensitive attribute '{self.sens_attr}' holds one group "
                f'only in this graph, and BeMap balances two or more. If '
                f'other graphs of the dataset hold more groups, pass '
                f"'num_groups' (e.g. BalanceAwareSampling(num_groups=2)) so "
                f'that every graph gets counts of the same shape'
            )
        count = checked_hop_group_counts(
            edges,
            sens,
            num_groups,
            self.num_hops,
            self.counting,
            self.memory_budget,
        )
        balance = checked_balance_score(count, self.delta)
        data.bemap_count = count
        data.bemap_balance = balance
        info = BeMapInfo.from_checked(
            sens, balance, num_groups, attribute, self.sens_attr
        )  # the attribute itself: the carrier watches it for edits
        data.edge_index = carrier_of(edges, info)
        return data

    def __repr__(self) -> str:
        return (
            f'{self.__class__.__name__}(sens_attr={self.sens_attr!r}, '
            f'num_hops={self.num_hops}, delta={self.delta}, '
            f'num_groups={self.num_groups}, counting={self.counting!r}, '
            f'memory_budget={self.memory_budget})'
        )
