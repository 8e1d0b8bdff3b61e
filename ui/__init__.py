"""The Streamlit layer between the pages and lib: each page stays a thin layout of calls into it.

Imports point one way: app -> pages -> ui -> lib. `lib/` never imports streamlit; this package is
a few packages, each saying in its docstring what lives there:
- `shell`: language, labels, the model and the learner's text, caches, navigation, sidebar, styles;
- `views`: the course's chart style, charts, and the browser views every lesson draws with;
- `lessons`: each lesson's cached computations, figures and sections;
- `learner`: progress kept in the browser, quizzes, shared links;
- `classroom`: a class, from the learner's side and from the teacher's page.

`through_app()`, the first call of every page file, is a start-up guard. Streamlit 1.67 keeps one
process-wide flag, `PagesManager.uses_pages_directory`: the first session's PagesManager sets it
to True because a `pages/` folder sits next to app.py, and only the public `st.navigation` sets it
back to False. Until app.py has called st.navigation once, every session whose run starts is run
in the old pages-folder mode (`_mpa_v1`): for a lesson URL, the page file alone, with a navigation
of raw file names, without app.py's sidebar, language or model. A class opening a shared lesson
link on a fresh server starts many such runs at once. A guard at `import ui` time ran once per
process, so it rescued only the first of them; this one runs on every page run and recognises the
old mode by its own mark (the navigation of this session lists app.py itself as a page, which
app.py's navigation never does), then switches the flag off and reruns the session through app.py.
"""

from __future__ import annotations

import os


def through_app() -> None:
    """Rerun through app.py if Streamlit ran this page file alone (pages-folder mode)."""
    import streamlit as st
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None:  # imported outside a script run (tests of lib-like helpers)
        return
    manager = ctx.pages_manager
    main = os.path.realpath(manager.main_script_path)
    pages = manager.get_pages()
    listed = [os.path.realpath(str(p.get("script_path", ""))) for p in pages.values()]
    if len(listed) > 1 and main in listed:
        PagesManager.uses_pages_directory = False
        st.rerun()
