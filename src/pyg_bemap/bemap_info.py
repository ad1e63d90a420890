r"""What BeMap knows about the nodes of a graph, and the sampler it keeps
for the graph it was last used with."""

import copy
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from pyg_bemap.infra.private_api import is_view, version_counter
from pyg_bemap.rules.balance import check_balance
from pyg_bemap.rules.draw import EdgeGrouping
from pyg_bemap.rules.groups import check_edge_index, sensitive_groups
from pyg_bemap.sampler import GraphSampler


class BeMapInfo:
    r"""What BeMap's sampler needs to know about the nodes of a graph: the
    sensitive group and the balance score of every node.

    It also keeps the :class:`~pyg_bemap.sampler.GraphSampler` of the graph
    it was last used with (the edges grouped per target and group, each
    setting's plan, the forms of the graph that routes built), rebuilt
    when the graph changes; which sample a layer uses is decided as
    :mod:`pyg_bemap.nn.sample_sharing` describes.

    The groups are a copy of :obj:`sens`. The graph that
    :class:`~pyg_bemap.BalanceAwareSampling` returns is read-only by
    contract (as for PyG's :obj:`cached=True` layers): the balance scores
    describe its edges and groups. An in-place edit through torch of the
    carried edges or of the sensitive attribute after the scores were
    computed raises at the next training pass (read from the tensors'
    version counters, at no cost; after a write, the attribute is read
    once to tell an edit from a write that left the groups as they were),
    also in a deep, pickled or saved copy of the graph (not in a
    :meth:`~torch_geometric.data.Data.clone`, which copies the attribute
    on its own); evaluation reads neither the scores nor the attribute
    and runs on the edges as they are.

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
        source: Tensor | None,
        name: str,
    ) -> 'BeMapInfo':
        r"""The information of groups and scores that were checked already
        (by :class:`~pyg_bemap.BalanceAwareSampling`): :obj:`groups` as
        :func:`~pyg_bemap.rules.sensitive_groups` returns them for the
        attribute :obj:`source`, whose later edits training detects."""
        info = cls.__new__(cls)
        info._set(groups, balance, num_groups, source, name)
        return info

    def _set(
        self,
        sens: Tensor,
        balance: Tensor,
        num_groups: int,
        source: Tensor | None = None,
        name: str = 'sens',
    ) -> None:
        if source is not None and sens.data_ptr() == source.data_ptr():
            sens = sens.clone()  # never the caller's memory
        self.sens, self.balance, self.num_groups = sens, balance, num_groups
        #: The sampler of the graph last used, per direction of messages
        #: (:obj:`True`: from :obj:`edge_index[1]` to :obj:`edge_index[0]`).
        self._samplers: dict[bool, GraphSampler] = {}
        self._name = name
        self._watch(source)
        #: The version of the carrier's edges when it was attached
        #: (:obj:`None`: no carrier yet), and their checksum.
        self.edges_version: int | None = None
        self.edges_checksum = 0

    def _watch(self, source: Tensor | None) -> None:
        r"""Watches :obj:`source`, the sensitive attribute the groups came
        from, for edits (see :meth:`check_unedited`)."""
        self._source = source
        self._source_version = 0 if source is None else version_counter(source)

    @property
    def num_nodes(self) -> int:
        return self.sens.numel()

    @property
    def graph_sampler(self) -> GraphSampler | None:
        r"""The sampler of the graph last used, messages flowing from
        :obj:`edge_index[0]` to :obj:`edge_index[1]`."""
        return self._samplers.get(False)

    @property
    def grouping(self) -> EdgeGrouping | None:
        r"""The edge grouping of the sampler's graph, if computed."""
        sampler = self.graph_sampler
        return None if sampler is None else sampler.memo['grouping']

    def sampler(
        self,
        graph: Any,
        edge_index: Tensor,
        grouping: EdgeGrouping | None = None,
        checked: bool = False,
        flipped: bool = False,
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
            flipped (bool, optional): :obj:`edge_index` is the graph's
                pairs flipped, for layers whose messages flow from
                :obj:`edge_index[1]` to :obj:`edge_index[0]`; such a
                sampler is kept apart. (default: :obj:`False`)
        """
        sampler = self.kept_sampler(graph, flipped)
        if sampler is not None:
            return sampler
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
        )
        self._samplers[flipped] = sampler
        return sampler

    def kept_sampler(
        self, graph: Any, flipped: bool = False
    ) -> GraphSampler | None:
        r"""The sampler kept for :obj:`graph`, unchanged since it was built
        (see :meth:`sampler`), else :obj:`None`."""
        sampler = self._samplers.get(flipped)
        if sampler is not None and sampler.matches(graph):
            return sampler
        return None

    def describes(self, sens: Any, balance: Any) -> bool:
        r"""Whether :obj:`sens` and :obj:`balance` are the very tensors this
        information was computed from (by
        :class:`~pyg_bemap.BalanceAwareSampling`)."""
        return sens is self._source and balance is self.balance

    def check_unedited(self, graph: Any) -> None:
        r"""Raises a :class:`ValueError` if :obj:`graph` carries this
        information and its edges, or the sensitive attribute the groups
        were copied from, were edited in place through torch since: the
        balance scores describe the old ones. Reads two version counters."""
        if (
            self.edges_version is not None
            and getattr(graph, '__dict__', {}).get('bemap') is self
            and version_counter(graph) != self.edges_version
        ):
            if edges_checksum(graph) != self.edges_checksum:
                raise ValueError(EDITED_EDGES)
            self.edges_version = version_counter(graph)  # an unchanging write
        source = self._source
        if source is None or version_counter(source) == self._source_version:
            return
        # a write reached the attribute's memory (a write to any of its
        # values, or to another part of the tensor it is a view of, e.g.
        # another column of x): whether it still holds the groups is read
        # once per such write
        if source.shape != self.sens.shape or not bool(
            (source == self.sens.to(source.dtype)).all()
        ):
            raise ValueError(
                f"The sensitive attribute '{self._name}' was modified in "
                f'place after BalanceAwareSampling (or AttachBeMap) computed '
                f'the balance scores from it, which describe the old groups. '
                f'Edit it before applying BalanceAwareSampling, or apply it '
                f'again to the edited graph'
            )
        self._source_version = version_counter(source)

    def apply(self, fn: Callable[[Tensor], Tensor]) -> 'BeMapInfo':
        r"""Returns a copy with :obj:`fn` applied to every tensor (e.g. a
        device move), without the sampler's cache (rebuilt on first use)."""
        return BeMapInfo.from_checked(
            fn(self.sens), fn(self.balance), self.num_groups, None, self._name
        )

    def __getstate__(self) -> dict[str, Any]:
        source = self._source
        return {  # the sampler is rebuilt on demand
            'sens': self.sens,
            'balance': self.balance,
            'num_groups': self.num_groups,
            'name': self._name,
            # pickled with the graph, the attribute comes back as the
            # loaded graph's own, whose edits training then detects (not
            # a view, which would bring the whole tensor it views along)
            'source': None if source is None or is_view(source) else source,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        # Only the node data: states saved by earlier versions also hold
        # caches, which are rebuilt on demand (and no source or name).
        self._set(**{k: v for k, v in state.items() if k in _STATE_KEYS})

    def __deepcopy__(self, memo: dict[int, Any]) -> 'BeMapInfo':
        out = self.apply(torch.clone)
        # the copied graph's attribute (None stays None)
        out._watch(copy.deepcopy(self._source, memo))
        return out

    def __repr__(self) -> str:
        return (
            f'{self.__class__.__name__}(num_nodes={self.num_nodes}, '
            f'num_groups={self.num_groups})'
        )


#: The keys of the state :meth:`BeMapInfo.__getstate__` gives.
_STATE_KEYS = ('sens', 'balance', 'num_groups', 'name', 'source')


#: The prime and the chunk of :func:`edges_checksum`.
_PRIME, _CHUNK = 2**31 - 1, 2**22


def edges_checksum(edges: Tensor) -> int:
    r"""A sum of the edges' indices, each times a weight of its position,
    modulo a prime (:math:`2^{31} - 1`): an edit changes it except with a
    probability of about :math:`5 \cdot 10^{-10}`. Read where the carrier
    is made and after a write, in chunks of bounded memory."""
    flat = edges.reshape(-1)
    total = flat.new_zeros((), dtype=torch.long)
    for start in range(0, flat.numel(), _CHUNK):
        part = flat[start : start + _CHUNK].long() % _PRIME
        position = torch.arange(part.numel(), device=flat.device) + start + 1
        total += (part * (position * 48271 % _PRIME) % _PRIME).sum()
    return int(total)


#: The error for carried edges edited after the information was attached.
EDITED_EDGES = (
    "The edges of 'edge_index' were modified in place after "
    'BalanceAwareSampling (or AttachBeMap) attached the balance scores, '
    'which describe the old edges. Edit the graph before applying '
    'BalanceAwareSampling, or apply it again to the edited graph'
)
