"""The command line as a package (issue 30): the names of the former module ``cudbound.cli`` are
where they were, the console script resolves to ``main``, and each command module adds its own
subcommands, in the order ``cudbound --help`` lists them."""
import importlib
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_former_modules_names_are_still_there():
    import cudbound.cli as cli

    for name in ("main", "build_parser", "read_csv", "in_flags", "CLIError", "EXIT_USAGE", "EXIT_FAILURE",
                 "EXIT_INTERRUPTED", "PROG", "DEFAULT_RESAMPLES"):
        assert hasattr(cli, name), name
    assert callable(cli.main) and cli.PROG == "cudbound" and cli.EXIT_USAGE == 2 and cli.DEFAULT_RESAMPLES == 500
    assert cli.__all__ == ["main", "build_parser", "read_csv", "CLIError"]


def test_the_console_script_is_main():
    from cudbound.cli import main

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    module, _, name = scripts["cudbound"].partition(":")
    assert getattr(importlib.import_module(module), name) is main


def test_each_command_module_adds_its_own_subcommands_in_order():
    from cudbound.cli import build_parser

    choices = build_parser()._subparsers._group_actions[0].choices
    assert list(choices) == ["demo", "interval", "compare", "coverage", "store", "auc", "xi-alpha"]
    store = choices["store"]._subparsers._group_actions[0].choices
    handlers = {name: parser.get_default("handler") for name, parser in [*choices.items(), *store.items()]}
    modules = {"demo": "interval", "interval": "interval", "compare": "compare", "coverage": "coverage",
               "check": "coverage",
               "export": "coverage", "auc": "auc", "xi-alpha": "xi_alpha"}
    for name, module in modules.items():
        assert handlers[name].__module__ == f"cudbound.cli.{module}", name
        assert callable(importlib.import_module(f"cudbound.cli.{module}").add_parser)
