"""
The documentation site builds with warnings as errors, and the README shows only tested commands.

The site (``docs/``, Sphinx with MyST Markdown, autodoc and sphinx-argparse) is built as a user
would build it; a broken cross-reference, a docstring that does not render or a parser that does
not import fails the build. Every command of the README's bash blocks is one of the docs'
commands, which the tests of each page run.
"""
from __future__ import annotations

from pathlib import Path
import re
import subprocess
import sys

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.timeout(300), pytest.mark.docs]


def doc_pages() -> list[Path]:
    """Return the site's Markdown pages: docs/*.md and those of its sections (docs/node/)."""
    return sorted(page for page in (ROOT / 'docs').rglob('*.md') if '_build' not in page.parts)


def bash_commands(path: Path) -> set[str]:
    """Return the commands of a Markdown file's bash blocks: continuations joined, no comments."""
    commands = set()
    for block in re.findall(r'```bash\n(.*?)```', path.read_text(), re.S):
        for line in block.replace('\\\n', ' ').splitlines():
            command = re.sub(r'\s+#.*$', '', line).strip()
            if command and not command.startswith('#'):
                commands.add(' '.join(command.split()))
    return commands


def test_the_site_builds_with_warnings_as_errors(tmp_path):
    out = tmp_path / 'html'
    done = subprocess.run([sys.executable, '-m', 'sphinx', '-W', '--keep-going', '-q', '-b',
                           'html', str(ROOT / 'docs'), str(out)],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    pages = {str(page.relative_to(out).with_suffix('')) for page in out.rglob('*.html')}
    assert {'index', 'library', 'node/index', 'node/interfaces', 'node/parameters', 'bag',
            'identify', 'excite', 'fleet', 'conventions',
            'glossary', 'cli', 'api', 'benchmarks', 'development'} <= pages
    cli = (out / 'cli.html').read_text()
    for option in ('--window', '--validate', '--scheduler', '--xacro-arg', '--keep-above'):
        assert option in cli, option  # each tool's --help, rendered from its parser
    api = (out / 'api.html').read_text()
    for name in ('rnea_batch', 'mass_matrix', 'link_jacobian', 'with_payload', 'Actuation',
                 'ContactSolver', 'world_wrenches'):
        assert name in api, name


def test_the_readme_shows_only_commands_the_docs_show():
    documented = set().union(*(bash_commands(page) for page in doc_pages()))
    shown = bash_commands(ROOT / 'README.md') - {'scripts/demo.sh', 'scripts/test.sh'}
    assert shown and shown <= documented, sorted(shown - documented)


def test_the_readme_is_a_front_door():
    text = (ROOT / 'README.md').read_text()
    assert len(text.splitlines()) <= 250
    assert not re.search(r'\bissue \d+|before this change|\bre-run after', text, re.I)
