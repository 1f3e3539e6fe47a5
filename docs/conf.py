"""Sphinx configuration of the cudbound documentation site.

Build (from the repository root, with ``pip install -e ".[docs]"``)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The chapters are the Markdown pages of this folder (myst-parser); the API reference is
generated from the docstrings (autosummary, autodoc, numpydoc), one page per public module,
each object documented once, in the module that defines it; the gallery is the ``plot_*.py``
scripts of ``examples/`` (sphinx-gallery), run at every build. No intersphinx. One example
(``plot_07_compare_models.py``) uses the UCI liver data: read from ``$CUDBOUND_DATA`` (CI sets
it), else downloaded once into the data cache (:func:`cudbound.datasets.load`); with the data
at hand the build needs no network.
"""
from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
os.environ.setdefault("MPLBACKEND", "Agg")  # the gallery draws without a display

try:  # the installed cudbound (CI: the one the tests just ran, whose numba kernels are cached) ...
    import cudbound  # noqa: E402
except ImportError:  # ... else this checkout
    sys.path.insert(0, str(ROOT))
    import cudbound  # noqa: E402
if Path(cudbound.__file__).resolve().parents[1] != ROOT:
    print(f"docs: documenting the installed cudbound {cudbound.__version__} at {Path(cudbound.__file__).parent}")

project = "cudbound"
author = "cudbound developers"
copyright = "the cudbound developers"  # noqa: A001 - Sphinx's name for it
release = cudbound.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "_generated", "_ext", "**.ipynb_checkpoints", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.json", "auto_examples/*.md5"]

# -- "Which interval should I use?": its table from the coverage study's table -------------
sys.path.insert(0, str(DOCS / "_ext"))
import verdicts  # noqa: E402

verdicts.write(DOCS / "_generated" / "verdicts.md")

# -- Markdown chapters (myst-parser) --------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# -- API reference (autosummary + autodoc + numpydoc) ---------------------------------------
autosummary_generate = True
autosummary_imported_members = False
autosummary_ignore_module_all = False
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"          # the numpydoc "Parameters" sections say the types
autodoc_inherit_docstrings = True
autoclass_content = "class"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_show_inherited_class_members = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False
numpydoc_validation_checks: set = set()

add_module_names = False
python_display_short_literal_types = True


INTERNAL = ("cudbound.cli", "cudbound.lifeline", "cudbound.workers", "cudbound.output")
"""Modules that serve the package itself (the command line, worker processes, the JSON layout):
documented in their source and in docs/architecture.md, not in the public reference. An internal
package's modules (``cudbound.cli.app``, ...) are internal too."""


def _public_modules() -> list[str]:
    """cudbound and every submodule whose dotted name has no part starting with an underscore,
    except the INTERNAL ones and their submodules."""
    names = ["cudbound"]
    for info in pkgutil.walk_packages(cudbound.__path__, "cudbound."):
        inside = info.name.startswith(tuple(f"{name}." for name in INTERNAL))
        if not any(part.startswith("_") for part in info.name.split(".")[1:]) and info.name not in INTERNAL \
                and not inside:
            names.append(info.name)
    return names


def _defining_module(obj) -> str | None:
    obj = getattr(obj, "py_func", obj)  # a numba dispatcher: its Python function
    if inspect.isclass(obj) or inspect.isfunction(obj):
        return obj.__module__
    return None


def _kind(obj) -> str:
    obj = getattr(obj, "py_func", obj)
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    if inspect.isfunction(obj):
        return "function"
    return "data"


def _api_layout():
    """For each public module: the names of its ``__all__`` that it defines (documented on its
    page) and those it re-exports (listed there, linked to the page of the defining module)."""
    own, elsewhere, kind = {}, {}, {}
    modules = _public_modules()
    for name in modules:
        module = importlib.import_module(name)
        source = inspect.getsource(module)
        own[name], elsewhere[name] = [], []
        for member in getattr(module, "__all__", []):
            obj = getattr(module, member)
            where = _defining_module(obj)
            if where is None:   # data: defined here if assigned at the top level of this file
                defined_here = re.search(rf"^{re.escape(member)}\s*(:[^=\n]*)?=", source, flags=re.M)
                where = name if defined_here else None
                if where is None:
                    where = next((m for m in modules if m != name
                                  and member in getattr(importlib.import_module(m), "__all__", [])
                                  and getattr(importlib.import_module(m), member) is obj
                                  and re.search(rf"^{re.escape(member)}\s*(:[^=\n]*)?=",
                                                inspect.getsource(importlib.import_module(m)), flags=re.M)),
                                 name)
            if where == name or where not in modules:
                own[name].append(member)
                kind[f"{name}.{member}"] = _kind(obj)
            else:
                elsewhere[name].append(f"{where}.{member}")
    return own, elsewhere, kind


def _submodules() -> dict:
    """Each public package's direct public submodules."""
    modules = _public_modules()
    return {name: [m for m in modules if m.rpartition(".")[0] == name] for name in modules}


_OWN, _ELSEWHERE, _KIND = _api_layout()
autosummary_context = {"cudbound_own": _OWN, "cudbound_elsewhere": _ELSEWHERE, "cudbound_kind": _KIND,
                       "cudbound_submodules": _submodules()}

# -- Gallery (sphinx-gallery) ---------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "min_reported_time": 0,
    "show_memory": False,
    "image_scrapers": ("matplotlib",),
    "reset_modules": ("matplotlib",),
    "capture_repr": ("_repr_html_", "__repr__"),
}

# -- HTML (pydata-sphinx-theme) -------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"cudbound {release}"
html_static_path: list = []
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 5,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version", "theme-version"],
}
html_sidebars = {"index": []}
html_show_sourcelink = False

# -- Docstrings: plain-text mathematics ------------------------------------------------------
# The package's docstrings write formulas as plain text, the way help() shows them: |x| is an
# absolute value or a norm, {i : ...} a set. In reStructuredText a bar starts a substitution
# reference, so before numpydoc and autodoc read a docstring, every bar outside inline
# literals, roles, literal blocks, doctests, tables and line blocks is escaped. Nothing else
# of a docstring is changed.
_INLINE = re.compile(r"(``.+?``|:[\w:.+-]+:`[^`]*`|`[^`]+`_{0,2})")
_TABLE_BORDER = re.compile(r"^\s*=+( +=+)+\s*$")


def _escape(text: str) -> str:
    parts = _INLINE.split(text)
    return "".join(p if i % 2 else p.replace("|", r"\|") for i, p in enumerate(parts))


def _simple_table(lines: list[str]) -> list[str]:
    """A simple table (its border lines included) with the bars of its cells escaped, the
    columns widened where an escape made a cell longer."""
    spans = [m.span() for m in re.finditer(r"=+", lines[0])]
    starts = [a for a, _ in spans]
    rows = []
    for line in lines:
        if _TABLE_BORDER.match(line) or not line.strip():
            rows.append(None if line.strip() else "")
            continue
        cells = [line[a:b] for a, b in zip(starts, starts[1:] + [None])]
        rows.append([_escape(c).rstrip() for c in cells])
    widths = [max([b - a] + [len(r[i]) for r in rows if r]) for i, (a, b) in enumerate(spans)]
    pad = " " * starts[0]
    out = []
    for r in rows:
        if r is None:
            out.append(pad + "  ".join("=" * w for w in widths))
        elif r == "":
            out.append("")
        else:
            out.append((pad + "  ".join(c.ljust(w) for c, w in zip(r, widths))).rstrip())
    return out


def _escape_bars(lines: list[str]) -> list[str]:
    out = []
    literal_indent = None   # indentation of the paragraph that opened a literal block (::)
    in_doctest = False
    table = None            # the lines of a simple table being read
    for k, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if literal_indent is not None:
            if stripped and indent <= literal_indent:
                literal_indent = None
            else:
                out.append(line)
                continue
        if table is not None:
            table.append(line)
            following = lines[k + 1].strip() if k + 1 < len(lines) else ""
            if _TABLE_BORDER.match(line) and not following:
                out.extend(_simple_table(table))
                table = None
            continue
        if _TABLE_BORDER.match(line):
            table = [line]
            continue
        if not stripped:
            in_doctest = False
        elif stripped.startswith(">>>"):
            in_doctest = True
        line_block = stripped == "|" or stripped.startswith("| ") or re.match(r"\+[-=]", stripped)
        if "|" in line and not (in_doctest or line_block):
            line = _escape(line)
        if stripped.endswith("::") and not in_doctest:
            literal_indent = indent
        out.append(line)
    if table is not None:
        out.extend(table)
    return out


def _process_docstring(app, what, name, obj, options, lines):
    lines[:] = _escape_bars(lines)


def _skip_member(app, what, name, obj, skip, options):
    # scikit-learn's metadata-routing setters (set_fit_request, ...), made for every estimator
    if re.fullmatch(r"set_\w+_request", name):
        return True
    return None


# unreferenced numbered citations: the module docstrings cite by author and year in the text
# and list the works under "References" as [1], [2], ...; that is what they mean to say
suppress_warnings = ["ref.citation"]


# A name re-exported by a package (``cudbound.cud_interval``) is documented once, under the module
# that defines it (``cudbound.cud.cud_interval``); a reference to the re-exported name is sent there.
_ALIASES = {f"{module}.{target.rpartition('.')[2]}": target
            for module, targets in _ELSEWHERE.items() for target in targets}


def _resolve_alias(app, env, node, contnode):
    target = _ALIASES.get(node.get("reftarget", ""))
    if node.get("refdomain") != "py" or target is None:
        return None
    return env.get_domain("py").resolve_xref(env, node["refdoc"], app.builder, node["reftype"], target, node,
                                             contnode)


def setup(app):
    app.connect("autodoc-process-docstring", _process_docstring, priority=400)  # before numpydoc
    app.connect("autodoc-skip-member", _skip_member)
    app.connect("missing-reference", _resolve_alias)
