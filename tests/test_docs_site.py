"""The documentation site (docs/conf.py, docs/index.rst, examples/) stays whole, checked without
building it: every chapter of docs/ is in the table of contents, every gallery script is a valid
sphinx-gallery example with a fixed seed, conf.py keeps its stack, and CI builds the site with
warnings as errors. The build itself runs in CI (.ci/run) and locally with the README's command."""
import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
EXAMPLES = ROOT / "examples"


def _toctree_entries(text: str) -> list[str]:
    entries = []
    for block in re.findall(r"^\.\. toctree::\n((?:[ \t]+.*\n|\n)+)", text, flags=re.M):
        for line in block.splitlines():
            line = line.strip()
            if line and not line.startswith(":"):
                entries.append(line)
    return entries


def _conf() -> dict:
    """The simple assignments of docs/conf.py (literals only), read without running it."""
    tree = ast.parse((DOCS / "conf.py").read_text(encoding="utf-8"))
    values = {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        for target in targets:
            if isinstance(target, ast.Name) and node.value is not None:
                try:
                    values[target.id] = ast.literal_eval(node.value)
                except ValueError:
                    pass
    return values


def _title(docstring: str) -> str | None:
    """The reStructuredText title a sphinx-gallery script must open with, or None."""
    lines = docstring.strip("\n").splitlines()
    if len(lines) >= 2 and lines[0].strip() and re.fullmatch(r"=+", lines[1].strip()) \
            and len(lines[1].strip()) >= len(lines[0].strip()):
        return lines[0].strip()
    return None


def test_every_chapter_is_in_the_toctree():
    entries = _toctree_entries((DOCS / "index.rst").read_text(encoding="utf-8"))
    chapters = sorted(p.stem for p in DOCS.glob("*.md"))
    assert chapters, "no docs/*.md chapters found"
    missing = [c for c in chapters if c not in entries]
    assert not missing, f"chapters missing from the toctree of docs/index.rst: {missing}"
    assert "auto_examples/index" in entries and "api/index" in entries


def test_examples_are_sphinx_gallery_scripts_with_a_title():
    scripts = sorted(EXAMPLES.glob("plot_*.py"))
    assert len(scripts) >= 6, scripts
    readme = EXAMPLES / "README.rst"
    assert _title(readme.read_text(encoding="utf-8")), "examples/README.rst needs a title (gallery header)"
    titles = []
    for script in scripts:
        tree = ast.parse(script.read_text(encoding="utf-8"), filename=str(script))
        docstring = ast.get_docstring(tree, clean=False)
        assert docstring, f"{script.name}: no module docstring"
        title = _title(docstring)
        assert title, f"{script.name}: the docstring must open with a title underlined with '='"
        titles.append(title)
    assert len(set(titles)) == len(titles), titles


def test_examples_use_fixed_seeds():
    """Every ``rng=`` and ``seed=`` argument of an example is an integer constant, so the gallery
    shows the same numbers at every build."""
    for script in sorted(EXAMPLES.glob("plot_*.py")):
        tree = ast.parse(script.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                for kw in node.keywords:
                    if kw.arg in ("rng", "seed", "random_state"):
                        assert isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, int), \
                            f"{script.name}:{node.lineno}: {kw.arg}= must be an integer constant"
                func = node.func
                if isinstance(func, ast.Attribute) and func.attr == "default_rng":
                    assert node.args and isinstance(node.args[0], (ast.Constant, ast.Name)), \
                        f"{script.name}:{node.lineno}: default_rng needs a seed"


def test_the_readme_example_is_in_the_gallery():
    text = (EXAMPLES / "plot_01_readme_example.py").read_text(encoding="utf-8")
    assert "cud_interval(X, y, confidence_level=0.95, n_resamples=500, rng=0" in text
    assert "demo_data(n=50, seed=0)" in text and "res.plot()" in text


def test_conf_sets_the_stack():
    conf = _conf()
    assert conf["html_theme"] == "pydata_sphinx_theme"
    for ext in ("numpydoc", "myst_parser", "sphinx_gallery.gen_gallery", "sphinx.ext.autodoc",
                "sphinx.ext.autosummary"):
        assert ext in conf["extensions"], ext
    assert "sphinx.ext.intersphinx" not in conf["extensions"], "the build must need no network"
    assert {"dollarmath", "amsmath"} <= set(conf["myst_enable_extensions"])
    assert conf["numpydoc_show_class_members"] is False


def test_docs_extra_and_ci_build():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    docs = {re.split(r"[<>=!~ \[]", req)[0].lower() for req in project["optional-dependencies"]["docs"]}
    assert {"sphinx", "numpydoc", "pydata-sphinx-theme", "myst-parser", "sphinx-gallery", "matplotlib"} <= docs
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert '".[docs]"' in ci
    assert re.search(r"-m sphinx -W --keep-going .*-b html docs", ci)
    gitignore = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    for path in ("docs/_build/", "docs/api/generated/", "docs/auto_examples/", "docs/sg_execution_times.rst"):
        assert path in gitignore, path


def _escape_bars():
    """The docstring pre-processor of docs/conf.py, taken from its source (conf.py itself imports
    the whole package)."""
    tree = ast.parse((DOCS / "conf.py").read_text(encoding="utf-8"))
    wanted = {"_INLINE", "_TABLE_BORDER", "_escape", "_simple_table", "_escape_bars"}
    body = [n for n in tree.body
            if (isinstance(n, ast.FunctionDef) and n.name in wanted)
            or (isinstance(n, ast.Assign) and any(getattr(t, "id", None) in wanted for t in n.targets))]
    namespace = {"re": re}
    exec(compile(ast.Module(body=body, type_ignores=[]), "docs/conf.py", "exec"), namespace)
    return namespace["_escape_bars"]


def test_plain_text_bars_are_escaped_and_nothing_else():
    escape = _escape_bars()
    lines = [
        "The bound |err_D(beta) - tau(beta)| <= Q, with ``|x|`` literal and :math:`|y|`.",
        "",
        "Example::",
        "",
        "    |kept| in a literal block",
        "",
        ">>> abs(-1)  # |x|",
        "1",
        "",
        "| a line block",
        "",
        "===  =====",
        "a    b",
        "===  =====",
        "x    |w|^2",
        "===  =====",
        "",
        "after |z|",
    ]
    out = escape(lines)
    assert out[0] == r"The bound \|err_D(beta) - tau(beta)\| <= Q, with ``|x|`` literal and :math:`|y|`."
    assert out[2:10] == lines[2:10]
    assert out[11:16] == ["===  =======", "a    b", "===  =======", r"x    \|w\|^2", "===  ======="]
    assert out[-1] == r"after \|z\|"
    assert escape(["no bars here", "  indented"]) == ["no bars here", "  indented"]


# ---- issue 29, point 3: a site like scipy's or scikit-learn's
import importlib  # noqa: E402
import sys  # noqa: E402


def _api_task_names() -> list[str]:
    text = (DOCS / "api" / "index.rst").read_text(encoding="utf-8")
    head = text.split("\nModules\n")[0]
    return re.findall(r"^   (cudbound\.[\w.]+)$", head, flags=re.M)


def test_api_landing_page_lists_the_public_api_by_task():
    """Every function and class the package exports appears in a task table, and every name
    listed there is public in the module that defines it (so the row links to its page)."""
    import inspect

    import cudbound

    listed = _api_task_names()
    assert len(set(listed)) >= 60
    defined = set()
    for name in listed:
        module, _, attr = name.rpartition(".")
        mod = importlib.import_module(module)
        assert attr in getattr(mod, "__all__", []), name
        obj = getattr(mod, attr)
        assert getattr(obj, "__module__", module) == module, (name, obj.__module__)
        defined.add(id(obj))
    for attr in cudbound.__all__:
        obj = getattr(cudbound, attr)
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and not issubclass_warning(obj):
            assert id(obj) in defined, f"cudbound.{attr} is in no task table of docs/api/index.rst"


def issubclass_warning(obj) -> bool:
    return isinstance(obj, type) and issubclass(obj, Warning)


def test_internal_modules_are_not_in_the_reference():
    conf = _conf()
    internal = conf["INTERNAL"]
    assert {"cudbound.cli", "cudbound.lifeline", "cudbound.workers"} <= set(internal)
    for name in internal:
        importlib.import_module(name)            # a real module (a typo would hide nothing)
    text = (DOCS / "conf.py").read_text(encoding="utf-8")
    assert "info.name not in INTERNAL" in text


def test_the_modules_of_an_internal_package_are_internal_too():
    """conf.py's _public_modules, run on its own: no module of cudbound.cli in the reference."""
    import pkgutil

    import cudbound

    tree = ast.parse((DOCS / "conf.py").read_text(encoding="utf-8"))
    function = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "_public_modules")
    namespace = {"cudbound": cudbound, "pkgutil": pkgutil, "INTERNAL": _conf()["INTERNAL"]}
    exec(compile(ast.Module(body=[function], type_ignores=[]), "docs/conf.py", "exec"), namespace)
    modules = namespace["_public_modules"]()
    assert "cudbound.cud" in modules and "cudbound.coverage.store" in modules
    assert not [m for m in modules if m == "cudbound.cli" or m.startswith("cudbound.cli.")], modules


def test_module_pages_lead_with_their_main_function():
    import cudbound.cud
    import cudbound.registry

    assert cudbound.cud.__all__[0] == "cud_interval"
    assert cudbound.registry.__all__[0] == "intervals"


def test_method_page_has_typeset_mathematics():
    text = (DOCS / "method.md").read_text(encoding="utf-8")
    assert len(re.findall(r"^\s*\$\$$", text, flags=re.M)) >= 6        # three display equations at least
    assert r"\sup_\beta" in text and r"\hat Q" in text
    assert "    |err_D(beta_hat) - tau(beta_hat)| <= sup_beta" not in text   # the ASCII form is gone
    assert "dollarmath" in _conf()["myst_enable_extensions"]


def test_which_interval_page_is_built_from_the_study_table():
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        import verdicts
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    counts = verdicts.read_counts()
    from cudbound.registry import method_names

    assert {verdicts.NAMES[m] for m in counts} == set(method_names())
    keep = sorted(m for m, per_n in counts.items() if verdicts.verdict(per_n) == verdicts.VERDICTS[0])
    page = (DOCS / "which_interval.md").read_text(encoding="utf-8")
    assert "{include} _generated/verdicts.md" in page
    first = page.split("## In short")[1].split("\n- ")[1]
    # the advice names exactly the methods the table says keep their promise at every n
    assert keep == ["CUD", "Y"] and "cud_interval" in first and "(`yang`)" in first
    table = verdicts.verdict_table()
    assert table.count("\n") == len(counts) + 2
    assert "which_interval" in _toctree_entries((DOCS / "index.rst").read_text(encoding="utf-8"))


def test_the_main_entry_points_typeset_their_formulas():
    """The formulas of the CUD interval, the replicate supremum and every baseline interval are
    typeset (numpydoc ``.. math::``, rendered by the API reference's MathJax), not plain text."""
    import inspect

    import cudbound
    from cudbound.baselines import methods, modern
    functions = [cudbound.cud_interval, cudbound.replicate_sup,
                 *(getattr(methods, name) for name in ("bs1", "bs2", "kohavi", "yang", "martin", "langford")),
                 *(getattr(modern, name) for name in ("wald_cv", "corrected_t", "conservative_z", "nested_cv", "bccv",
                                                      "e632_delta"))]
    plain = [f.__name__ for f in functions if ".. math::" not in (inspect.getdoc(f) or "")]
    assert not plain, plain
