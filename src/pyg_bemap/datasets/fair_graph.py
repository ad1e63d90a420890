r"""The real-world fairness graphs of the BeMap paper and its predecessors."""

import contextlib
import io
import os
import os.path as osp
import shutil
import uuid
from collections.abc import Callable

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Data, InMemoryDataset, download_url
from torch_geometric.utils import coalesce, remove_self_loops, to_undirected

from pyg_bemap.datasets.raw_files import (
    DownloadError,
    download_reason,
    drop_if_empty,
    misplaced_raw_files,
    read_table,
    read_verified,
)
from pyg_bemap.datasets.reference_splits import (
    REFERENCE_SEED,
    check_per_class_budget,
    reference_split,
)
from pyg_bemap.datasets.specs import ALIASES, BUNDLED_DIR, SPECS
from pyg_bemap.datasets.splits import check_label_budget, split_masks
from pyg_bemap.infra.checks import check_seed

#: The version of what :meth:`FairGraphDataset.process` makes of the raw
#: files, part of every processed folder's name: raise it with any change to
#: the graphs it gives (``tests/datasets/test_fair_graph.py`` pins a digest
#: of them to it), so files of an older version are never read.
PROCESSED_FORMAT = 2


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
        root (str, optional): Root directory; files go to
            :obj:`root/<name>/` (:obj:`None`: :func:`default_root`).
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
        root: str | None,
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
        split_seed = check_seed('split_seed', split_seed)
        if label_budget is not None:
            label_budget = check_label_budget(label_budget, " or 'reference'")
            per_class = SPECS[key].reference_split == 'per_class'
            if split == 'reference' and per_class:
                check_per_class_budget(label_budget)
        self.name = key
        self.spec = SPECS[key]
        self.split_seed = split_seed
        self.label_budget = label_budget
        self.split = split
        self.keep_sensitive = keep_sensitive
        self.feature_norm = feature_norm
        super().__init__(
            default_root() if root is None else root,
            transform,
            pre_transform,
            log=log,
            force_reload=force_reload,
        )
        try:
            self.load(self.processed_paths[0])
        except Exception:  # a damaged file: built again from the raw files
            # (another process that found it damaged may have removed it)
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.processed_paths[0])
            self.process()
            self.load(self.processed_paths[0])

    @property
    def raw_dir(self) -> str:
        return osp.join(self.root, self.name, 'raw')

    @property
    def processed_dir(self) -> str:
        # a folder per variant, so that PyG's check of the pre_transform
        # (its pre_transform.pt sits beside the graph) is the graph's own
        budget = self.label_budget or 'all'
        variant = (
            f'format{PROCESSED_FORMAT}_{self.split}{self.split_seed}_budget'
            f'{budget}_sens{int(self.keep_sensitive)}_norm'
            f'{int(self.feature_norm)}'
        )
        return osp.join(self.root, self.name, 'processed', variant)

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
        return 'data.pt'

    def download(self) -> None:
        files = (self.spec.node_file, self.spec.edge_file)
        folders = (osp.join(self.root, self.name), self.root)
        misplaced = misplaced_raw_files(files, folders, self.raw_dir)
        if misplaced:
            drop_if_empty(self.raw_dir)
            raise ValueError(
                f'Found {", ".join(misplaced)} outside the raw folder: move '
                f'{"it" if len(misplaced) == 1 else "them"} into '
                f"'{self.raw_dir}'"
            )
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
                drop_if_empty(self.raw_dir)
                raise DownloadError(
                    f"Could not download '{file.name}' from {file.url} "
                    f'({download_reason(error)}). Put the published file '
                    f"(plain or xz-compressed) into '{self.raw_dir}' by hand"
                ) from None

    def process(self) -> None:
        node_path, edge_path = (
            osp.join(self.raw_dir, n) for n in self.raw_file_names
        )
        header, table = read_table(
            read_verified(node_path, self.spec.node_file)
        )
        edges = np.loadtxt(
            io.StringIO(read_verified(edge_path, self.spec.edge_file)),
            ndmin=2,
        )
        data = self._build(header, table, edges)
        if self.pre_transform is not None:
            data = self.pre_transform(data)
        self._save_whole(data)

    def _save_whole(self, data: Data) -> None:
        # Whole or not at all: processes that read the graph while another
        # one writes it (the workers of a fresh root) never see half a file.
        # Created with the umask's permissions (mkstemp's are the owner's
        # alone), so a shared root serves every user of it.
        partial = osp.join(
            self.processed_dir, f'.{os.getpid()}.{uuid.uuid4().hex}.part'
        )
        os.close(os.open(partial, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
        try:
            self.save([data], partial)
            os.replace(partial, self.processed_paths[0])
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.remove(partial)

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
            f'split={self.split!r}, keep_sensitive={self.keep_sensitive}, '
            f'feature_norm={self.feature_norm})'
        )


def scale_features(x: Tensor) -> Tensor:
    r"""Scales every column to :math:`[-1, 1]` (BeMap's :obj:`feature_norm`),
    mapping constant columns to 0.
    """
    low, high = x.min(0).values, x.max(0).values
    span = (high - low).masked_fill(high == low, 1.0)
    out = 2 * (x - low) / span - 1
    return out.masked_fill((high == low).view(1, -1), 0.0)


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
    return FairGraphDataset(root, 'nba', split_seed, log=False)[0]


def load_german(root: str | None = None, split_seed: int = 0) -> Data:
    r"""The German credit graph that ships inside the package (no
    download), processed as :class:`FairGraphDataset` does, without printing
    anything.
    """
    return FairGraphDataset(root, 'german', split_seed, log=False)[0]
