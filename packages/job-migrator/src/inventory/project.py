"""What codemods and migrator use of the analyzer besides the Inventory's models.

The public door into inventory's private rooms, so that the other packages
never import them (an import-linter ``forbidden`` contract keeps it so):

- the scan's walk: :func:`walk` (every Python file a scan reads: ``.gitignore``,
  virtualenvs, tool folders and migrations left out) and its :class:`SourceFile`;
- the one rule of what is test code: :func:`is_test_path` (a test module's
  name, :func:`is_test_file`, or a folder in :data:`TEST_DIRS` on the path);
- :func:`dotted_source`: the dotted text of a name / attribute chain;
- :func:`parse_module`: a module's tree as the scan reads it (Python 3.12 syntax such as
  ``type X = ...`` read on an older interpreter too);
- :class:`PythonEnvError`: the project's interpreter cannot be asked for its paths.
"""

from inventory._env import PythonEnvError
from inventory._extract import parse_module
from inventory._extract._resolve import dotted_source
from inventory._scan._walk import (
    TEST_DIRS,
    SourceFile,
    WalkResult,
    is_test_file,
    is_test_path,
    walk,
)

__all__ = [
    "TEST_DIRS",
    "PythonEnvError",
    "SourceFile",
    "WalkResult",
    "dotted_source",
    "is_test_file",
    "is_test_path",
    "parse_module",
    "walk",
]
