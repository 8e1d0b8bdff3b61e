"""Streamlit building blocks shared by the pages: state, caching, sidebar, quiz, figures.

Imports point one way: app -> pages -> ui -> lib. `lib/` never imports streamlit; this package is
where the pages' shared widgets live, so each page stays a thin layout.

One start-up guard lives here, because every page imports this package. Streamlit treats a
`pages/` folder as an old-style multipage app until the first `st.navigation` call in the
process: if the very first request after a server start opens a lesson's own URL (a link shared
in class, say), Streamlit runs that page file alone, without app.py, so without the sidebar, the
language or the model. The page's first `import ui` then switches that mode off, as
`st.navigation` would, and reruns, so app.py runs and opens the requested lesson.
"""

from streamlit.runtime.pages_manager import PagesManager

if PagesManager.uses_pages_directory:
    import streamlit as _st

    PagesManager.uses_pages_directory = False
    _st.rerun()
