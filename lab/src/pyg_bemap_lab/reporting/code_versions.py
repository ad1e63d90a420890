r"""Which code made the runs behind a page: every Markdown report ends with
the code versions of the runs its tables read, and says so where they mix
versions."""

from collections import Counter
from collections.abc import Iterable
from typing import Any

#: A run whose provenance names no commit of the code that trained it.
UNRECORDED = 'not recorded'


def code_version(run: dict[str, Any]) -> str:
    r"""The code that trained :obj:`run`, as a page names it: the library's
    commit (and the lab's, where it differs), whether the checkout had
    uncommitted changes and whether the run was stored as exploratory; or
    :obj:`UNRECORDED`."""
    found = run.get('provenance') or {}
    library, lab = found.get('library', {}), found.get('lab', {})
    if library.get('commit') is None:
        return UNRECORDED
    text = library['commit'][:10]
    if lab.get('commit') not in (None, library['commit']):
        text += f', lab {lab["commit"][:10]}'
    if False in (library.get('clean'), lab.get('clean')):
        text += ' with uncommitted changes'
    if found.get('exploratory'):
        text += ', exploratory'
    return text


def code_versions_section(runs: Iterable[dict[str, Any]]) -> str:
    r"""The closing section of a Markdown report whose tables read
    :obj:`runs`: each code version with its number of runs, and a marked
    line where there is more than one or none is recorded."""
    counts = Counter(code_version(run) for run in runs)
    lines = ['', '## Code versions', '']
    if not counts:
        return '\n'.join([*lines, 'No stored run is behind this page.', ''])
    lines += [
        "The runs behind this page's tables, by the code that trained them",
        f'(library commit; a run that records none: "{UNRECORDED}"):',
        '',
        '| code | runs |',
        '|---|---|',
        *(f'| {v} | {n:,} |' for v, n in sorted(counts.items())),
        '',
    ]
    if len(counts) > 1:
        lines.append(
            f'**Mixed: these tables mix runs of {len(counts)} code versions.**'
        )
        lines.append('')
    elif UNRECORDED in counts:  # runs that name no code may mix versions
        lines.append(
            '**Unknown: these tables rest on runs that name no code version.**'
        )
        lines.append('')
    return '\n'.join(lines)
