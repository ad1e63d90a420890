r"""The library's modules import what docs/architecture.md's table of
floors says they may, so that the table stays true of the code."""

import ast
import os.path as osp
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / 'src' / 'pyg_bemap'


def floors() -> dict[str, list[str]]:
    r"""Every unit of the table (a package's folder or a module, as the
    first part of a dotted name) and the names its row allows, read from
    the backticked names of the row's last column that name a unit or a
    module of the library (the rest of the prose is free)."""
    text = (ROOT / 'docs' / 'architecture.md').read_text()
    section = text.split('## Floors of the library')[1].split('\n## ')[0]
    table = {}
    for row in section.splitlines():
        cells = [cell.strip() for cell in row.strip('|').split('|')]
        if len(cells) != 3 or not cells[0].isalnum():
            continue
        units = [_dotted(name) for name in re.findall(r'`([^`]+)`', cells[1])]
        allowed = [
            _dotted(name)
            for name in re.findall(r'`([^`]+)`', cells[2])
            if _is_library_module(_dotted(name))
        ]
        for unit in units:
            table[unit] = allowed
    return table


def _dotted(name: str) -> str:
    return name.strip('/').removesuffix('.py').replace('/', '.')


def _is_library_module(dotted: str) -> bool:
    path = PACKAGE.joinpath(*dotted.split('.'))
    return path.is_dir() or path.with_suffix('.py').is_file()


def imports_of(path: Path) -> set[str]:
    r"""The library modules :obj:`path` imports, anywhere in it, as dotted
    names below :obj:`pyg_bemap` ('' for the package itself)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return {
        name.removeprefix('pyg_bemap').removeprefix('.')
        for name in names
        if name == 'pyg_bemap' or name.startswith('pyg_bemap.')
    }


def _allows(allowed: list[str], imported: str) -> bool:
    return any(
        imported == name or imported.startswith(name + '.') for name in allowed
    )


def test_every_module_of_the_library_has_a_floor():
    table = floors()
    assert len(table) >= 13, table  # the table was read
    for path in PACKAGE.rglob('*.py'):
        dotted = _dotted(osp.relpath(path, PACKAGE))
        assert dotted.split('.')[0] in table, f'{dotted} is on no floor'


def test_every_module_imports_only_what_its_floor_allows():
    table = floors()
    wrong = []
    for path in PACKAGE.rglob('*.py'):
        dotted = _dotted(osp.relpath(path, PACKAGE))
        unit = dotted.split('.')[0]
        if unit == '__init__':  # re-exports of every floor
            continue
        for imported in imports_of(path):
            own = imported.split('.')[0] == unit
            if not (own or _allows(table[unit], imported)):
                wrong.append(f'{dotted} imports {imported or "pyg_bemap"}')
    assert not wrong, wrong


def test_the_floors_table_reads_as_the_docs_say():
    # a row whose prose would be misread would make the tests above pass
    # for the wrong reason
    table = floors()
    assert table['sampler'] == [
        'rules',
        'settings',
        'infra.private_api',
        'infra.compat',
        'infra.replay',
    ]
    assert table['infra'] == ['infra']
    assert table['datasets'] == ['infra']
    assert _allows(table['routes'], 'sampler')
    assert not _allows(table['sampler'], 'infra.sparse')


def _private_names_read(tree: ast.AST) -> set[str]:
    r"""The names starting with one underscore read as attributes of
    anything but ``self``, and from ``sys``."""
    names = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        name = node.attr
        if not name.startswith('_') or name.startswith('__'):
            continue
        if isinstance(node.value, ast.Name) and node.value.id in ('self',):
            continue
        names.add(name)
    return names


def test_private_names_of_torch_and_python_live_in_private_api():
    # the library's own private names read from its own objects
    own = {'_set', '_sample', '_watch'}
    found = {}
    for path in PACKAGE.rglob('*.py'):
        if path.name == 'private_api.py':
            continue
        names = _private_names_read(ast.parse(path.read_text())) - own
        if names:
            found[str(path.relative_to(PACKAGE))] = sorted(names)
    assert found == {}
    private = ast.parse((PACKAGE / 'infra' / 'private_api.py').read_text())
    assert {'_getframe', '_modules', '_base'} <= _private_names_read(private)
