r"""What BeMap knows about the nodes of a graph, and the sampler it keeps
for the graph it was last used with."""

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from pyg_bemap.sampler import GraphSampler
from pyg_bemap.utils.balance import check_balance
from pyg_bemap.utils.graph_identity import EDITED_EDGES
from pyg_bemap.utils.groups import check_edge_index, sensitive_groups
from pyg_bemap.utils.sampling import EdgeGrouping


class BeMapInfo:
    r"""What BeMap's sampler needs to know about the nodes of a graph: the
    sensitive group and the balance score of every node.

    It also keeps the :class:`~pyg_bemap.sampler.GraphSampler` of the graph
    it was last used with (the edges grouped per target and group, each
    setting's plan), rebuilt when the graph changes; which sample a layer
    uses is decided as :mod:`pyg_bemap.nn.sample_sharing` describes.

    The groups are a copy of :obj:`sens`; every sample drawn compares them
    with :obj:`sens` and raises if :obj:`sens` was edited in place since
    (by indexing, through :obj:`.data` or a NumPy view): the balance
    scores describe the old groups.

    Args:
        sens (torch.Tensor): The sensitive group of every node, :obj:`[N]`.
        balance (torch.Tensor): The balance score of every node, :obj:`[N]`.
        num_groups (int, optional): The number of groups.
            (default: :obj:`None`, inferred)
        name (str, optional): The name of the sensitive attribute, for
            error messages. (default: :obj:`'sens'`)
    """

    def __init__(
        self,
        sens: Tensor,
        balance: Tensor,
        num_groups: int | None = None,
        name: str = 'sens',
    ):
        num_nodes = sens.numel() if isinstance(sens, Tensor) else 0
        groups, num_groups = sensitive_groups(
            sens, num_nodes, num_groups, name
        )
        balance = check_balance(balance, groups)
        self._set(groups, balance, num_groups, sens, name)

    @classmethod
    def from_checked(
        cls,
        groups: Tensor,
        balance: Tensor,
        num_groups: int,
        source: Tensor,
        name: str,
    ) -> 'BeMapInfo':
        r"""The information of groups and scores that were checked already
        (by :class:`~pyg_bemap.BalanceAwareSampling`): :obj:`groups` as
        :func:`~pyg_bemap.utils.groups.sensitive_groups` returns them for
        the attribute :obj:`source`, whose edits later samples detect."""
        info = cls.__new__(cls)
        info._set(groups, balance, num_groups, source, name)
        return info

    def _set(
        self,
        groups: Tensor,
        balance: Tensor,
        num_groups: int,
        source: Tensor | None,
        name: str,
    ) -> None:
        if source is not None and groups.data_ptr() == source.data_ptr():
            groups = groups.clone()  # never the caller's memory
        self.sens, self.balance, self.num_groups = groups, balance, num_groups
        self.graph_sampler: GraphSampler | None = None
        self._source = source
        self._name = name
        #: Whether the edges may have been edited without torch counting it
        #: (see :class:`BeMapEdgeIndex`): then every sample reads them to
        #: check. True unless a carrier that owns its edges says otherwise.
        self.untracked_aliases = True

    @property
    def num_nodes(self) -> int:
        return self.sens.numel()

    @property
    def grouping(self) -> EdgeGrouping | None:
        r"""The edge grouping of the sampler's graph, if any."""
        sampler = self.graph_sampler
        return sampler.grouping if sampler is not None else None

    def sampler(
        self,
        graph: Any,
        edge_index: Tensor,
        grouping: EdgeGrouping | None = None,
        checked: bool = False,
    ) -> GraphSampler:
        r"""Returns the sampler of :obj:`graph` (whose (source, target)
        pairs are :obj:`edge_index`), building it when the kept one belongs
        to another graph or the graph was modified in place.

        Args:
            graph: The graph as the layers receive it.
            edge_index (torch.Tensor): Its edges, :obj:`[2, E]`.
            grouping (EdgeGrouping, optional): Its edge grouping, if known.
                (default: :obj:`None`)
            checked (bool, optional): :obj:`edge_index` was checked against
                the nodes already. (default: :obj:`False`)

        Raises:
            ValueError: If :obj:`graph` is a carrier of this information
                whose edges were modified in place since the information was
                attached, or the sensitive attribute was: the balance scores
                describe the old graph. (A plain edge list edited in place
                gets a new sampler.)
        """
        sampler = self.graph_sampler
        if sampler is not None and sampler.matches(graph):
            return sampler
        if (
            sampler is not None
            and _carries(graph, self)
            and sampler.edited(graph)
        ):
            raise ValueError(EDITED_EDGES)
        if not checked:
            check_edge_index(
                edge_index, self.num_nodes, 'the BeMap information'
            )
        if edge_index.device != self.sens.device:
            raise ValueError(
                f'The graph is on {edge_index.device} but its '
                f'BeMap information is on {self.sens.device}'
            )
        sampler = GraphSampler(
            graph,
            edge_index,
            self.sens,
            self.balance,
            self.num_groups,
            grouping,
            self.check_groups_unchanged,
            lambda: self.untracked_aliases,
        )
        self.graph_sampler = sampler
        return sampler

    def check_groups_unchanged(self) -> None:
        r"""Raises a :class:`ValueError` if the sensitive attribute the
        groups were copied from was edited in place since."""
        source = self._source
        if source is not None and not torch.equal(
            source.to(self.sens.dtype), self.sens
        ):
            raise ValueError(
                f"The sensitive attribute '{self._name}' was modified in "
                f'place after BalanceAwareSampling (or AttachBeMap) computed '
                f'the balance scores from it, which describe the old groups. '
                f'Edit it before applying BalanceAwareSampling, or apply it '
                f'again to the edited graph'
            )

    def apply(self, fn: Callable[[Tensor], Tensor]) -> 'BeMapInfo':
        r"""Returns a copy with :obj:`fn` applied to every tensor (e.g. a
        device move), without the sampler's cache (rebuilt on first use)."""
        out = BeMapInfo.__new__(BeMapInfo)
        out._set(
            fn(self.sens), fn(self.balance), self.num_groups, None, self._name
        )
        return out  # untracked aliases until a carrier owns the result

    def __getstate__(self) -> dict[str, Any]:
        return {  # the sampler is rebuilt on demand
            'sens': self.sens,
            'balance': self.balance,
            'num_groups': self.num_groups,
            'name': self._name,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        # Only the node data: states saved by earlier versions also hold
        # caches, which are rebuilt on demand.
        self._set(
            state['sens'],
            state['balance'],
            state['num_groups'],
            None,
            state.get('name', 'sens'),
        )

    def __deepcopy__(self, memo: dict[int, Any]) -> 'BeMapInfo':
        return self.apply(lambda t: t.clone())

    def __repr__(self) -> str:
        return (
            f'{self.__class__.__name__}(num_nodes={self.num_nodes}, '
            f'num_groups={self.num_groups})'
        )


def _carries(graph: Any, info: BeMapInfo) -> bool:
    r"""Whether :obj:`graph` is a carrier of :obj:`info` (a
    :class:`~pyg_bemap.BeMapEdgeIndex`), without importing the carrier."""
    return getattr(graph, '__dict__', {}).get('bemap') is info
