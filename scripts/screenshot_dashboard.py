"""The teacher's dashboard as the README shows it: a class of six with a few answers, in Chromium.

    .venv/bin/python scripts/screenshot_dashboard.py [docs/dashboard.png]

Starts the app on a SQLite file in a temporary folder, starts a class and has six pseudonymous
learners answer the first lesson's questions through the class store (as the app reports them),
then opens the teacher link in Chromium and saves the dashboard's part of the page.
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else REPO / "docs" / "dashboard.png")
    tmp = Path(tempfile.mkdtemp(prefix="itt-shot-"))
    url = f"sqlite:///{tmp / 'classes.db'}"
    os.environ["ITT_DATABASE_URL"] = url
    from playwright.sync_api import sync_playwright

    from lib.classroom import classroom as C
    from lib.course.quiz import load_bank
    from drivers.browser import CHROMIUM, CHROMIUM_ARGS, serve

    store = C.ClassStore(url)
    created = store.create_class("3B · Dentro il Transformer")
    rng = random.Random(4)
    bank = [q for q in load_bank("it", "numbers") if q.kind == "choice"][:5]
    for name in ["Panda 12", "Volpe 7", "Lince 31", "Gufo 5", "Airone 18", "Tasso 22"]:
        me = store.join(created.code, name)
        store.record_visit(me.id, "numbers")
        for q in bank[: rng.randint(2, len(bank))]:
            pick = int(q.answer) if rng.random() < 0.7 else (int(q.answer) + 1) % len(q.options)
            store.record_answer(me.id, "numbers", q.id, str(pick), pick == int(q.answer))
        if rng.random() < 0.5:
            store.record_visit(me.id, "tokenization")
    with serve(REPO / "app.py") as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 2000})
        page.goto(f"{base}/teachers?lang=it&class={created.code}&key={created.secret}")
        from lib.course import i18n

        header = page.get_by_role("heading", name=i18n.ui("it")["class.dash.header"])
        header.wait_for(timeout=180_000)
        page.get_by_text("Panda 12").first.wait_for(timeout=60_000)
        header.evaluate("h => h.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(3000)  # the tables settle
        box = header.bounding_box()
        page.screenshot(path=str(out), clip={"x": box["x"] - 20, "y": max(0, box["y"] - 20),
                                             "width": min(1100, 1400 - box["x"]), "height": 1350})
        browser.close()
    store.close()
    print(f"saved {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
