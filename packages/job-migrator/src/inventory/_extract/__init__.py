"""The extractor: one file's text in, its :class:`~inventory.summary.FileSummary` out.

A pure function of ``(source, path, module, is_package)``: it never imports or
runs the code it reads, and walks each file once with the stdlib ``ast``
(libcst with metadata is far too slow for whole-project scans).

Conventions on top of those documented in :mod:`inventory.summary`:

* Builtins are module-qualified like any unimported name (``open`` in
  ``shop.views`` -> ``shop.views.open``), as the contract says.
* A call through a value of unknown type (a parameter, ``HOOKS[name]``) has
  target ``?.__call__``; a method called on the result of a non-constructor
  call keeps the call marker (``Order.objects.filter(x).update`` ->
  ``shop.models.Order.objects.filter().update``).
* ``assignments`` maps a module-level instance to its class
  (``pool = ThreadPoolExecutor()`` -> ``concurrent.futures.ThreadPoolExecutor``),
  so ``mailer.send()`` elsewhere resolves to the method that runs; it also maps
  ``"f()"`` to the class a module-level function returns (its annotation, or
  the one class all its returns construct), so ``get_adapter().send_mail()``
  in another module resolves to ``Adapter.send_mail``.
* A Thread-subclass site (``TargetKind.THREAD_SUBCLASS``) names the class as
  its target; the classifier checks it derives from Thread and takes ``run``.
* An executor or process pool whose type this file cannot see (defined in
  another module, an unannotated parameter) is recognised by its name
  (``workers.EXECUTOR``, ``self.pool``), and the site's detail says so.
* Work a function waits for in place is not a site: ``with`` executors and
  task groups, ``fut.result()``, ``as_completed``/``wait``/``gather``,
  ``await task``, iterating ``ex.map(...)``. Threads running a server's
  accept loop, an event loop, or a ``while True`` queue consumer are not
  sites either.
* Calls inside a lambda body are not the enclosing function's calls (they
  run when the lambda is called, usually later); a site still sees them.
* Facts at module level are dropped: a summary has nowhere to put them.
* ``source_hash`` covers the decorators and the whole lines of the function:
  ``sha256(inspect.getsource(fn))[:16]`` at run time gives the same value.
* A handler is found by its decorator, its class (class-based views), its
  module and first parameter (Django ``views``), or a registering call in the
  same file (``Route("/", homepage)``, ``add_url_rule``, ``add_api_route``).
"""

from __future__ import annotations

import ast
import sys

from inventory._extract._grammar import rewrite
from inventory._extract._source import SourceText, normalised
from inventory._extract.detectors._guards import atomic_requests
from inventory._extract.detectors._installed import installed
from inventory._extract.walker._walker import Walker
from inventory._heap import bulk_work
from inventory.summary import FileSummary

__all__ = ["extract_source"]


def extract_source(source: str, path: str, module: str, is_package: bool = False) -> FileSummary:
    """Summarise one module. Raises ``SyntaxError`` when ``source`` does not parse."""
    source = source.removeprefix("\ufeff")  # a BOM left by a plain utf-8 decode
    with bulk_work():  # the collector paused, a deeper recursion limit
        return _extract(source, path, module, is_package)


def _extract(source: str, path: str, module: str, is_package: bool) -> FileSummary:
    # The tree and the walker die with this frame, before the collector is back on.
    tree, text = _parse(source, path)
    summary = FileSummary(path=path, module=module, is_package=is_package, lines=len(text.lines))
    Walker(tree, text, summary).run(tree)
    summary.atomic_requests = atomic_requests(tree, source)
    for path, kind in installed(tree, source).items():  # the walker's add_middleware first
        summary.installed.setdefault(path, kind.value)
    return summary


def parse_module(source: str, path: str = "<unknown>") -> ast.Module:
    """The module's tree as the extractor reads it: PEP 695 syntax (``type X = ...``,
    ``def f[T]``) rewritten on an older interpreter, lines and columns kept. Raises
    ``SyntaxError`` when it does not parse even so."""
    return _parse(source.removeprefix("\ufeff"), path)[0]


def _parse(source: str, path: str) -> tuple[ast.Module, SourceText]:
    """The tree, and the text it was parsed from: Python 3.12 syntax rewritten on an older
    interpreter, lines kept: PEP 695 token by token (``_grammar``: names kept, segments
    still cut from ``source``), else the whole file through libcst (``_lower``: a PEP 701
    f-string reusing its quotes, which 3.11's tokenizer cannot even split)."""
    try:
        return ast.parse(source, filename=path), SourceText(source)
    except SyntaxError:
        if sys.version_info >= (3, 12):
            raise
    plain = normalised(source)
    newer = rewrite(plain)
    if newer is not None:
        try:
            return ast.parse(newer[0], filename=path), SourceText(newer[0], plain, newer[1])
        except SyntaxError:
            pass
    from inventory._extract._lower import lower  # libcst, only on this failure path

    lowered = lower(plain)
    if lowered is not None:
        return ast.parse(lowered, filename=path), SourceText(lowered)
    return ast.parse(source, filename=path), SourceText(source)  # raises the original error
