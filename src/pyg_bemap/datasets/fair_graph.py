r"""The real-world fairness graphs of the BeMap paper and its predecessors."""

import csv
import hashlib
import io
import lzma
import os
import os.path as osp
import shutil
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Data, InMemoryDataset, download_url
from torch_geometric.utils import coalesce, remove_self_loops, to_undirected

from pyg_bemap.datasets.reference_splits import REFERENCE_SEED, reference_split

_GITHUB = 'https://raw.githubusercontent.com'
BUNDLED_DIR = osp.join(osp.dirname(osp.abspath(__file__)), 'data')


@dataclass(frozen=True)
class RawFile:
    r"""A published raw file: its name, where it is published and the Git
    blob id (SHA-1 of :obj:`"blob <size>\0" + content`) of its content.
    """

    name: str
    url: str
    git_blob: str


@dataclass(frozen=True)
class GraphSpec:
    r"""How a dataset is read, after the reference loaders."""

    node_file: RawFile
    edge_file: RawFile
    sens_column: str
    label_column: str
    dropped: tuple[str, ...]  # never features (besides label and group)
    id_column: str | None = None  # None: the node id is the row index
    label_map: Callable[[Tensor], Tensor] | None = None
    sens_map: dict[str, float] | None = None
    reference_label_budget: int = 0
    reference_split: str = 'per_class'  # see reference_splits.SPLIT_KINDS


def _raw(repo: str, commit: str, path: str, blob: str) -> RawFile:
    return RawFile(
        osp.basename(path), f'{_GITHUB}/{repo}/{commit}/{path}', blob
    )


_FAIRGNN = ('EnyanDai/FairGNN', '13cdca7627d7779a2396299cdc8edd3a790db7cc')
_NIFTY = ('chirag126/nifty', '6c270c5ec736c5138d455609112cf6dfcc63dcca')
_BEMAP = ('xiaolin-cs/BeMap', '408dc7de2f5cbb65a8ebf23379daaac94804dc22')
_GMFD = (
    'yushundong/Graph-Mining-Fairness-Data',
    '2bd4b5cd9a09d87e93c8efc490773cbfa0a7984e',
)


def _working_in_field(label: Tensor) -> Tensor:
    return torch.where(label < 0, -1, (label > 0).long())


def _good_customer(label: Tensor) -> Tensor:
    return (label > 0).long()


def _pokec(suffix: str, csv_blob: str, edge_blob: str) -> GraphSpec:
    name = f'region_job{suffix}'
    return GraphSpec(
        _raw(*_FAIRGNN, f'dataset/pokec/{name}.csv', csv_blob),
        _raw(*_FAIRGNN, f'dataset/pokec/{name}_relationship.txt', edge_blob),
        sens_column='region',
        label_column='I_am_working_in_field',
        dropped=(),
        id_column='user_id',
        label_map=_working_in_field,
        reference_label_budget=500,
        reference_split='labelled',
    )


SPECS: dict[str, GraphSpec] = {
    'nba': GraphSpec(
        _raw(
            *_FAIRGNN,
            'dataset/NBA/nba.csv',
            '81cbb6eca011f472b7f408a1f96b43b4ce825fe5',
        ),
        _raw(
            *_FAIRGNN,
            'dataset/NBA/nba_relationship.txt',
            'cdd10b20ac12f9a3eec421c4a5c0109310d8fe95',
        ),
        sens_column='country',
        label_column='SALARY',
        dropped=(),
        id_column='user_id',
        reference_label_budget=100,
        reference_split='labelled_val_is_test',
    ),
    'recidivism': GraphSpec(
        _raw(
            *_BEMAP,
            'dataset/bail/bail.csv',
            'a47a42ac9b546a54c94ff39a33fa1fa7d0ccaa37',
        ),
        _raw(
            *_BEMAP,
            'dataset/bail/bail_edges.txt',
            'd1f789c0d2de6408de1189b1125810632d030503',
        ),
        sens_column='WHITE',
        label_column='RECID',
        dropped=(),
        reference_label_budget=100,
    ),
    'credit': GraphSpec(
        _raw(
            *_NIFTY,
            'dataset/credit/credit.csv',
            '8f8c017fdc9eb4d841736e5987d4df7083128416',
        ),
        _raw(
            *_GMFD,
            'dataset/credit/credit_edges.txt',
            '05c6c5f96a7992d3110aba2ce25598046f8fee4a',
        ),
        sens_column='Age',
        label_column='NoDefaultNextMonth',
        dropped=('Single',),
        reference_label_budget=6000,
    ),
    'german': GraphSpec(
        _raw(
            *_NIFTY,
            'dataset/german/german.csv',
            'febc8f18bb8bace8203648dc8cf6e6598d926c89',
        ),
        _raw(
            *_NIFTY,
            'dataset/german/german_edges.txt',
            '3510911bdca0225647eeee212159eb23c3b9e374',
        ),
        sens_column='Gender',
        label_column='GoodCustomer',
        dropped=('OtherLoansAtStore', 'PurposeOfLoan'),
        label_map=_good_customer,
        sens_map={'Female': 1.0, 'Male': 0.0},
        reference_label_budget=100,
    ),
    'pokec_z': _pokec(
        '',
        'c50552a998e224f9ee214fff80c249fb5cf40bf9',
        '0b346e3a3d8f42b4eb489984cbc178f3988b0eeb',
    ),
    'pokec_n': _pokec(
        '_2',
        '7f836f487358af4f0cbbb2b1204e41810a45cc74',
        'd0a0833805331cffb09a03820e70066990f15c10',
    ),
}
ALIASES = {'bail': 'recidivism'}


class DownloadError(OSError):
    r"""A dataset file could not be downloaded; the message says where to
    put it by hand."""


def _reason(error: BaseException) -> str:
    r"""The innermost cause of a chain of exceptions, in one line."""
    while error.__cause__ is not None or error.__context__ is not None:
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def git_blob_id(content: bytes) -> str:
    r"""The Git object id of a file's content."""
    header = f'blob {len(content)}\0'.encode()
    return hashlib.sha1(header + content).hexdigest()


class FairGraphDataset(InMemoryDataset):
    r"""The fairness benchmark graphs used by `"BeMap: Balanced Message
    Passing for Fair Graph Neural Network"
    <https://arxiv.org/abs/2306.04107>`_ and the FairGNN, NIFTY and EDITS
    papers: :obj:`'nba'`, :obj:`'recidivism'` (alias :obj:`'bail'`),
    :obj:`'credit'`, :obj:`'german'`, :obj:`'pokec_z'` and :obj:`'pokec_n'`.

    Raw files are the published ones, looked for in :obj:`root/<name>/raw/`
    (plain or :obj:`.xz`-compressed) and otherwise downloaded from the public
    repositories (NBA and German ship inside the package, so they need no
    download). The Git blob id of every file is checked against the
    published one.

    The processed graph follows the reference loaders:

    * :obj:`x`: float features, every column but the node id, the label, the
      sensitive attribute (kept with :obj:`keep_sensitive=True`) and the
      reference loaders' exclusions (Credit: :obj:`Single`; German:
      :obj:`OtherLoansAtStore`, :obj:`PurposeOfLoan`), scaled per column to
      :math:`[-1, 1]` as BeMap's :obj:`feature_norm` does (constant columns
      become 0; :obj:`feature_norm=False` keeps raw values);
    * :obj:`edge_index`: undirected (both directions), no duplicates, no
      self-loops;
    * :obj:`y`: 0/1 labels, -1 for unlabelled nodes (NBA :obj:`SALARY`,
      Recidivism :obj:`RECID`, Credit :obj:`NoDefaultNextMonth`, German
      :obj:`GoodCustomer` with -1 mapped to 0, Pokec
      :obj:`I_am_working_in_field` binarised as :obj:`label > 0`);
    * :obj:`s`: the sensitive group (NBA :obj:`country`, Recidivism
      :obj:`WHITE`, Credit :obj:`Age`, German :obj:`Gender` with Female 1 and
      Male 0, Pokec :obj:`region`);
    * :obj:`train_mask`, :obj:`val_mask`, :obj:`test_mask`: with
      :obj:`split='random'`, a seeded random 50% / 25% / 25% split of the
      labelled nodes (the paper's protocol); with :obj:`label_budget`,
      training keeps only the first :obj:`min(50%, budget)` of those nodes
      (:obj:`'reference'`: the reference code's budgets, NBA 100, Recidivism
      100, Credit 6000, German 100, Pokec 500). With
      :obj:`split='reference'`, the reference loaders' own split, replayed
      with Python's shuffle (:mod:`~pyg_bemap.datasets.reference_splits`):
      per class for Recidivism, Credit and German; for NBA, 100 training
      nodes and every other labelled node in the test split, which is also
      the validation split.

    Statistics (the processed graphs, default options):

    ==========  ======  ==========  ========  ===============  ============
    Name        Nodes   Undirected  Features  Labels (-1/0/1)  Groups (0/1)
                        edges
    ==========  ======  ==========  ========  ===============  ============
    nba         403     10,621      95        90/154/159       296/107
    recidivism  18,876  311,870     17        0/11,772/7,104   9,317/9,559
    credit      30,000  137,377     12        0/6,636/23,364   27,315/2,685
    german      1,000   21,742      26        0/300/700        690/310
    ==========  ======  ==========  ========  ===============  ============

    Args:
        root (str): Root directory; files go to :obj:`root/<name>/`.
        name (str): The dataset.
        split_seed (int, optional): Seed of the split; part of the processed
            file's name. (default: :obj:`None`: :obj:`0` for the random
            split, the reference loaders' :obj:`20` for theirs)
        label_budget (int or str, optional): Cap on the training nodes, or
            :obj:`'reference'`. (default: :obj:`None`: no cap for the random
            split, the reference budget for the reference split)
        split (str, optional): :obj:`'random'` or :obj:`'reference'`.
            (default: :obj:`'random'`)
        keep_sensitive (bool, optional): Keep the sensitive attribute among
            the features. (default: :obj:`False`)
        feature_norm (bool, optional): Scale features to :math:`[-1, 1]`.
            (default: :obj:`True`)
        transform, pre_transform (callable, optional): As in
            :class:`~torch_geometric.data.InMemoryDataset`.
        force_reload (bool, optional): Re-process. (default: :obj:`False`)
        log (bool, optional): Print progress while downloading and
            processing. (default: :obj:`True`)
    """

    def __init__(
        self,
        root: str,
        name: str,
        split_seed: int | None = None,
        label_budget: int | str | None = None,
        keep_sensitive: bool = False,
        feature_norm: bool = True,
        transform: Callable | None = None,
        pre_transform: Callable | None = None,
        force_reload: bool = False,
        split: str = 'random',
        log: bool = True,
    ):
        key = str(name).lower()
        key = ALIASES.get(key, key)
        if key not in SPECS:
            raise ValueError(
                f"Unknown dataset '{name}'; choose one of "
                f'{sorted(SPECS) + sorted(ALIASES)}'
            )
        if split not in ('random', 'reference'):
            raise ValueError(
                f"'split' must be 'random' or 'reference' (got {split!r})"
            )
        if label_budget == 'reference' or (
            split == 'reference' and label_budget is None
        ):
            label_budget = SPECS[key].reference_label_budget
        if split_seed is None:
            split_seed = REFERENCE_SEED if split == 'reference' else 0
        if label_budget is not None and (
            not isinstance(label_budget, int) or label_budget < 1
        ):
            raise ValueError(
                f"'label_budget' must be a positive integer or "
                f"'reference' (got {label_budget!r})"
            )
        self.name = key
        self.spec = SPECS[key]
        self.split_seed = split_seed
        self.label_budget = label_budget
        self.split = split
        self.keep_sensitive = keep_sensitive
        self.feature_norm = feature_norm
        super().__init__(
            root,
            transform,
            pre_transform,
            log=log,
            force_reload=force_reload,
        )
        self.load(self.processed_paths[0])

    @property
    def raw_dir(self) -> str:
        return osp.join(self.root, self.name, 'raw')

    @property
    def processed_dir(self) -> str:
        return osp.join(self.root, self.name, 'processed')

    @property
    def raw_file_names(self) -> list[str]:
        names = []
        for file in (self.spec.node_file, self.spec.edge_file):
            packed = f'{file.name}.xz'
            exists = osp.exists(osp.join(self.raw_dir, packed))
            names.append(packed if exists else file.name)
        return names

    @property
    def processed_file_names(self) -> str:
        budget = self.label_budget or 'all'
        return (
            f'data_{self.split}{self.split_seed}_budget{budget}_sens'
            f'{int(self.keep_sensitive)}_norm{int(self.feature_norm)}.pt'
        )

    def download(self) -> None:
        for file in (self.spec.node_file, self.spec.edge_file):
            if osp.exists(osp.join(self.raw_dir, file.name)) or osp.exists(
                osp.join(self.raw_dir, f'{file.name}.xz')
            ):
                continue
            bundled = osp.join(BUNDLED_DIR, self.name, f'{file.name}.xz')
            if osp.exists(bundled):
                os.makedirs(self.raw_dir, exist_ok=True)
                shutil.copy(bundled, self.raw_dir)
                continue
            try:
                download_url(file.url, self.raw_dir, log=False)
            except Exception as error:
                raise DownloadError(
                    f"Could not download '{file.name}' from {file.url} "
                    f'({_reason(error)}). Put the published file (plain or '
                    f"xz-compressed) into '{self.raw_dir}' by hand"
                ) from None

    def process(self) -> None:
        node_path, edge_path = (
            osp.join(self.raw_dir, n) for n in self.raw_file_names
        )
        header, table = _read_table(
            _read_verified(node_path, self.spec.node_file)
        )
        edges = np.loadtxt(
            io.StringIO(_read_verified(edge_path, self.spec.edge_file)),
            ndmin=2,
        )
        data = self._build(header, table, edges)
        if self.pre_transform is not None:
            data = self.pre_transform(data)
        self.save([data], self.processed_paths[0])

    def _build(
        self, header: list[str], table: np.ndarray, edges: np.ndarray
    ) -> Data:
        spec = self.spec
        for name in (spec.sens_column, spec.label_column, *spec.dropped):
            if name not in header:
                raise ValueError(
                    f"Column '{name}' is missing from '{spec.node_file.name}'"
                )
        excluded = {spec.label_column, *spec.dropped}
        if spec.id_column is not None:
            excluded.add(spec.id_column)
        if not self.keep_sensitive:
            excluded.add(spec.sens_column)

        def values(name: str) -> np.ndarray:
            column = table[:, header.index(name)]
            for text, number in (spec.sens_map or {}).items():
                column = np.where(column == text, str(number), column)
            return column.astype(np.float64)

        features = [name for name in header if name not in excluded]
        x = torch.from_numpy(np.stack([values(f) for f in features], 1))
        x = x.float()
        if self.feature_norm:
            x = scale_features(x)
        y = torch.from_numpy(values(spec.label_column)).long()
        if spec.label_map is not None:
            y = spec.label_map(y)
        s = torch.from_numpy(values(spec.sens_column)).long()
        node_ids = None
        if spec.id_column is not None:
            node_ids = torch.from_numpy(values(spec.id_column)).long()
        data = Data(
            x=x, edge_index=self._edges(edges, node_ids, y.numel()), y=y, s=s
        )
        if self.split == 'reference':
            budget = self.label_budget or spec.reference_label_budget
            masks = reference_split(
                y, spec.reference_split, budget, self.split_seed
            )
        else:
            masks = split_masks(y, self.split_seed, self.label_budget)
        data.train_mask, data.val_mask, data.test_mask = masks
        return data

    def _edges(
        self, edges: np.ndarray, node_ids: Tensor | None, num_nodes: int
    ) -> Tensor:
        pairs = torch.from_numpy(edges).long().view(-1, 2)
        if node_ids is not None:
            ids, order = torch.sort(node_ids)
            position = torch.searchsorted(ids, pairs).clamp(max=num_nodes - 1)
            if not bool((ids[position] == pairs).all()):
                raise ValueError(
                    f"'{self.spec.edge_file.name}' refers to "
                    f'ids missing from '
                    f"'{self.spec.node_file.name}'"
                )
            pairs = order[position]
        edge_index = pairs.t().contiguous()
        if edge_index.numel() and int(edge_index.max()) >= num_nodes:
            raise ValueError(
                f"'{self.spec.edge_file.name}' refers to nodes "
                f'beyond the {num_nodes} rows of the node file'
            )
        edge_index, _ = remove_self_loops(edge_index)
        edge_index = to_undirected(edge_index, num_nodes=num_nodes)
        return coalesce(edge_index, num_nodes=num_nodes)

    def __repr__(self) -> str:
        return (
            f'{self.__class__.__name__}({self.name}, split_seed='
            f'{self.split_seed}, label_budget={self.label_budget}, '
            f'split={self.split!r})'
        )


def scale_features(x: Tensor) -> Tensor:
    r"""Scales every column to :math:`[-1, 1]` (BeMap's :obj:`feature_norm`),
    mapping constant columns to 0.
    """
    low, high = x.min(0).values, x.max(0).values
    span = (high - low).masked_fill(high == low, 1.0)
    out = 2 * (x - low) / span - 1
    return out.masked_fill((high == low).view(1, -1), 0.0)


def split_masks(
    y: Tensor, seed: int, label_budget: int | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    r"""A seeded random 50% / 25% / 25% split of the labelled nodes
    (:obj:`y >= 0`); :obj:`label_budget` caps the training nodes.
    """
    labelled = (y >= 0).nonzero().view(-1)
    gen = torch.Generator().manual_seed(seed)
    labelled = labelled[torch.randperm(labelled.numel(), generator=gen)]
    half, three_quarters = labelled.numel() // 2, (3 * labelled.numel()) // 4
    train_end = half if label_budget is None else min(half, label_budget)
    masks = []
    for index in (
        labelled[:train_end],
        labelled[half:three_quarters],
        labelled[three_quarters:],
    ):
        mask = torch.zeros(y.numel(), dtype=torch.bool)
        mask[index] = True
        masks.append(mask)
    return masks[0], masks[1], masks[2]


def _read_verified(path: str, file: RawFile) -> str:
    opener = lzma.open if path.endswith('.xz') else open
    with opener(path, 'rb') as handle:
        content = handle.read()
    blob = git_blob_id(content)
    if blob != file.git_blob:
        raise ValueError(
            f"'{path}' is not the published '{file.name}': its Git blob id is "
            f'{blob}, expected {file.git_blob}. Replace it with the file from '
            f'{file.url}'
        )
    return content.decode('utf-8')


def _read_table(text: str) -> tuple[list[str], np.ndarray]:
    header = next(csv.reader([text.split('\n', 1)[0]]))
    table = np.loadtxt(
        io.StringIO(text),
        delimiter=',',
        dtype=str,
        skiprows=1,
        ndmin=2,
        comments=None,
    )
    return header, table


def default_root() -> str:
    r"""Where datasets go unless told otherwise: :obj:`$PYG_BEMAP_DATA`, or
    :obj:`~/.cache/pyg_bemap`.
    """
    return os.environ.get(
        'PYG_BEMAP_DATA', osp.join(osp.expanduser('~'), '.cache', 'pyg_bemap')
    )


def load_nba(root: str | None = None, split_seed: int = 0) -> Data:
    r"""The NBA graph that ships inside the package (no download), processed
    as :class:`FairGraphDataset` does, without printing anything.
    """
    root = root or default_root()
    return FairGraphDataset(root, 'nba', split_seed, log=False)[0]
