"""House rules that keep the codebase in shape: lib stays pure, pages stay thin, text is data."""

import ast
import json
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


def test_lib_never_imports_streamlit():
    offenders = [p.name for p in (ROOT / "lib").glob("*.py") if "streamlit" in _imports(p)]
    assert offenders == []


def test_lib_never_imports_the_ui_or_pages():
    offenders = [p.name for p in (ROOT / "lib").glob("*.py") if {"ui", "pages"} & _imports(p)]
    assert offenders == []


def test_pages_are_thin():
    for page in (ROOT / "pages").glob("*.py"):
        assert len(page.read_text(encoding="utf-8").splitlines()) <= 150, page.name


def test_every_label_used_in_code_exists_in_both_languages():
    import re

    from lib import i18n

    labels = {lang: i18n.ui(lang) for lang in ("it", "en")}
    assert labels["it"].keys() == labels["en"].keys()
    # Each lesson's label file exists in both languages.
    assert [p.name for p in i18n.ui_files("it")[1:]] == [p.name for p in i18n.ui_files("en")[1:]]
    used = set()
    for path in [ROOT / "app.py", *(ROOT / "ui").glob("*.py"), *(ROOT / "pages").glob("*.py")]:
        used |= set(re.findall(r"\bt\(\"([a-z_][a-z0-9_.]*)\"", path.read_text(encoding="utf-8")))
    missing = sorted(k for k in used if k not in labels["en"])
    assert missing == []


def test_no_cdn_in_app_code():
    hosts = ("cdnjs", "cdn.jsdelivr", "unpkg.com", "fonts.googleapis")
    for path in [ROOT / "app.py", *(ROOT / "ui").glob("*.py"), *(ROOT / "pages").glob("*.py")]:
        text = path.read_text(encoding="utf-8")
        assert not any(h in text for h in hosts), path.name
