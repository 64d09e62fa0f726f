"""The house plan of the library, enforced: where code goes and how big it may grow.

* No math module imports the experiments or the command line (they import the math).
* No module of infonce_lib is over 800 lines and no function body over 60 lines: a smell
  detector, to split by concept, not a target.
* Every experiment module follows the template of infonce_lib/experiments/__init__.py.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import infonce_lib
from infonce_lib import Report
from infonce_lib.experiments import EXPERIMENTS

PACKAGE = Path(infonce_lib.__file__).resolve().parent
MODULES = sorted(PACKAGE.rglob("*.py"))
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 60
TEMPLATE = ("NAME", "SUMMARY", "CHAPTER", "Config", "Result", "run", "tables", "checks", "report")


def _relative(path: Path) -> str:
    return path.relative_to(PACKAGE.parent).as_posix()


def _is_upper_layer(path: Path) -> bool:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] == "experiments" or rel.name in ("cli.py", "__main__.py")


def _imported_modules(tree: ast.AST, path: Path) -> set[str]:
    """Absolute names of the infonce_lib modules a file imports."""
    package = ["infonce_lib", *path.relative_to(PACKAGE).parent.parts]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            out.add(module)
            out |= {f"{module}.{alias.name}" for alias in node.names}
    return out


def test_math_modules_never_import_the_experiments_or_the_command_line():
    offenders = []
    for path in MODULES:
        if _is_upper_layer(path):
            continue
        names = _imported_modules(ast.parse(path.read_text()), path)
        bad = {
            n
            for n in names
            if n.startswith(("infonce_lib.experiments", "infonce_lib.cli", "infonce_lib.__main__"))
        }
        if bad:
            offenders.append(f"{_relative(path)} imports {sorted(bad)}")
    assert not offenders, offenders


def test_modules_and_functions_are_small():
    too_long = {}
    for path in MODULES:
        text = path.read_text()
        if text.count("\n") > MAX_MODULE_LINES:
            too_long[_relative(path)] = f"{text.count(chr(10))} lines"
        for name, lineno, n in _long_functions(text):
            too_long[f"{_relative(path)} {name}"] = f"line {lineno}: a {n}-line body"
    assert not too_long, too_long


def _long_functions(text: str):
    """(name, line, body lines) of every function whose body, docstring aside, is too long."""
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body[1:] if ast.get_docstring(node) is not None else node.body
            if body:
                n = body[-1].end_lineno - body[0].lineno + 1
                if n > MAX_FUNCTION_LINES:
                    yield node.name, node.lineno, n


def test_the_size_detector_sees_a_long_body_and_ignores_a_long_docstring():
    doc = '    """' + "words\n" * 100 + '    """\n'
    short = "def f():\n" + doc + "    x = 1\n" * MAX_FUNCTION_LINES
    long = "def g():\n" + "    x = 1\n" * (MAX_FUNCTION_LINES + 1)
    assert list(_long_functions(short)) == []
    assert list(_long_functions(long)) == [("g", 1, MAX_FUNCTION_LINES + 1)]


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_every_experiment_follows_the_template(name):
    module = EXPERIMENTS[name]
    missing = [attr for attr in TEMPLATE if not hasattr(module, attr)]
    assert not missing, f"{module.__name__} lacks {missing}"
    assert module.NAME == name and module.__name__.startswith("infonce_lib.experiments.")
    assert isinstance(module.SUMMARY, str) and module.CHAPTER.startswith("chapter ")
    for cls in (module.Config, module.Result):
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen, cls
    config = module.Config()  # the defaults are valid
    assert hash(config) == hash(module.Config())  # so run() can cache on it
    for func in ("run", "report"):
        default = inspect.signature(getattr(module, func)).parameters["config"].default
        # None, not Config(): a default Config() would be built when the module is imported
        assert default is None, f"{name}.{func} must default to None (meaning Config())"
    assert inspect.signature(module.report).return_annotation in (Report, "Report")
    for func in ("tables", "checks"):
        assert len(inspect.signature(getattr(module, func)).parameters) == 1


def test_registry_is_a_plain_dict_of_modules():
    assert type(EXPERIMENTS) is dict
    assert all(inspect.ismodule(m) for m in EXPERIMENTS.values())


def test_package_namespace_lists_each_name_once_and_leaves_the_experiments_out():
    names = infonce_lib.__all__
    assert len(names) == len(set(names))
    assert all(hasattr(infonce_lib, name) for name in names)
    done = subprocess.run(
        [sys.executable, "-c", "import sys, infonce_lib; print(sorted(m for m in sys.modules "
         "if m.startswith(('infonce_lib.experiments', 'infonce_lib.cli'))))"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert done.stdout.strip() == "[]"


HEAVY_SCIPY = ("scipy.optimize", "scipy.stats", "scipy.integrate", "scipy.linalg", "scipy.spatial")


@pytest.mark.parametrize("package", ["infonce_lib", "infonce_lib.experiments"])
def test_importing_the_package_leaves_the_heavy_scipy_modules_for_first_use(package):
    """Every chapter starts by importing these: the reader waits for it each time."""
    code = f"import sys, {package}\nprint(' '.join(m for m in {HEAVY_SCIPY!r} if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == [], f"importing {package} loads {out}; import them inside the function"


# What the browser's Python (Pyodide) and Windows lack: the chapters import the experiments
# in JupyterLite too, so nothing may need these at import time.
MISSING_IN_THE_BROWSER = ("_multiprocessing", "resource")


def test_the_experiments_import_without_process_pools_or_resource():
    blocked = "".join(f"sys.modules[{m!r}] = None\n" for m in MISSING_IN_THE_BROWSER)
    code = (
        f"import sys\n{blocked}import infonce_lib, infonce_lib.experiments\n"
        "from infonce_lib.experiments import _bf_protocol\n"
        "assert _bf_protocol._cpu() >= 0\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
