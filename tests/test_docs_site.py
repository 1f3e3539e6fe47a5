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
