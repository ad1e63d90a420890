from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.transforms import BaseTransform

from pyg_bemap.edge_index import attach_bemap


class AttachBeMap(BaseTransform):
    r"""Re-attaches the groups and balance scores that
    :class:`~pyg_bemap.BalanceAwareSampling` cached on the full graph to the
    edges of a sub-graph, e.g. a mini-batch of
    :class:`~torch_geometric.loader.NeighborLoader`.

    The loader slices node attributes, so :obj:`data.bemap_balance` and the
    sensitive attribute arrive holding the full-graph values of the sampled
    nodes; nothing is recomputed from the sub-graph. The fair neighbourhood
    is then drawn inside the mini-batch's edges on every training pass (rule
    4 on the edges the loader sampled: the quotas count those neighbours,
    and the :obj:`'degree'` strategy weighs a neighbour by its out-degree in
    the mini-batch, while balance scores are the full graph's):

    .. code-block:: python

        data = BalanceAwareSampling(sens_attr='s')(data)   # once, full graph
        loader = NeighborLoader(data, num_neighbors=[10, 10],
                                transform=AttachBeMap(sens_attr='s'))

    Args:
        sens_attr (str, optional): The node attribute holding the sensitive
            group. (default: :obj:`'s'`)
        num_groups (int, optional): The number of groups, so that a
            mini-batch missing a group keeps the full graph's count.
            (default: :obj:`None`, taken from :obj:`data.bemap_count`)
    """

    def __init__(self, sens_attr: str = 's', num_groups: int | None = None):
        self.sens_attr = sens_attr
        self.num_groups = num_groups

    def forward(self, data: Data) -> Data:
        balance = getattr(data, 'bemap_balance', None)
        if balance is None:
            raise ValueError(
                "AttachBeMap needs 'bemap_balance': apply "
                'BalanceAwareSampling to the full graph before building the '
                'loader'
            )
        # a missing attribute is reported by attach_bemap, which names it
        sens: Tensor = getattr(data, self.sens_attr, None)  # type: ignore[assignment]
        num_groups = self.num_groups
        count = getattr(data, 'bemap_count', None)
        if num_groups is None and count is not None:
            num_groups = count.size(-1)
        data.edge_index = attach_bemap(
            data.edge_index,
            sens,
            balance,
            num_groups,
            self.sens_attr,
        )
        return data

    def __repr__(self) -> str:
        return (
            f'{self.__class__.__name__}(sens_attr={self.sens_attr!r}, '
            f'num_groups={self.num_groups})'
        )
