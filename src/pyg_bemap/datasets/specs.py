r"""Where each fairness graph is published and how it is read: the raw
files with their Git blob ids, the sensitive and label columns, and the
reference code's split of each."""

import os.path as osp
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

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
