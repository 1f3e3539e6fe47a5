"""cudbound/optim/svm_dual/__init__.py: the package exports what the single module exported before it was split
by job, each the object of the module that defines it, and every module is importable by its name."""
import importlib

import cudbound.optim.svm_dual as svm_dual

MODULES = {"smo_solver": ["smo", "gradient"], "active_set_solver": ["active_set"],
           "decremental": ["decrement", "kkt_inverse", "independent_free_set"], "conic": ["solve_conic"],
           "kkt": ["bias_from_gradient", "kkt_violation", "polish", "kkt_check", "kkt_check_near"]}


def test_every_function_is_exported_from_the_module_that_defines_it():
    exported = []
    for name, functions in MODULES.items():
        module = importlib.import_module(f"cudbound.optim.svm_dual.{name}")
        assert sorted(module.__all__) == sorted(functions)
        for function in functions:
            assert getattr(svm_dual, function) is getattr(module, function)
            defined = getattr(module, function)
            assert getattr(defined, "py_func", defined).__module__ == module.__name__
        exported += functions
    assert sorted(svm_dual.__all__) == sorted(exported)
    # the private steps the tests imported from the package before the split
    for private in ("_border", "_border_vector", "_lu_solve", "_remove_free"):
        assert callable(getattr(svm_dual, private))


def test_no_module_is_hidden_by_an_exported_name():
    """``import cudbound.optim.svm_dual.X as m`` and Sphinx's autosummary look up X as an attribute of the package
    first: a module named like one of its exported functions would resolve to the function."""
    for name in MODULES:
        assert name not in svm_dual.__all__
        module = importlib.import_module(f"cudbound.optim.svm_dual.{name}")
        assert getattr(svm_dual, name) is module
