"""Streamlit building blocks shared by the pages: state, caching, sidebar, quiz, figures.

Imports point one way: app -> pages -> ui -> lib. `lib/` never imports streamlit; this package is
where the pages' shared widgets live, so each page stays a thin layout.
"""
