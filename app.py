"""Inside the Transformer / Dentro il Transformer: the entry point.

Language, page config, the shared sidebar, the model, and st.navigation over the lesson pages.
"""

import streamlit as st

from lib.serving import log
from ui.classroom import join, pacing
from ui.learner import persist, share
from ui.shell import cache, core, nav, sidebar, styles
from ui.views import export

log.configure()  # one line on stderr per failure the app survives, with its cause (lib/serving/log.py)

core.lang()
# An emoji icon: a :material/...: one makes the browser fetch a font from the internet.
st.set_page_config(page_title=core.t("app.title"), page_icon="🧠", layout="wide")
export.install_modebar()  # every figure saves as PNG or SVG from its mode bar, offline
styles.render()  # wide lesson tables scroll in their own box on a phone
page = nav.navigation()
nav.follow_alias(page)  # `/numbers`, `/attenzione`...: the page they name, at its own address
nav.note_shown(page)  # a section's run that names another page comes back to it (nav.back_to_shown)
nav.not_found_notice(page)  # an address that names no page: the first lesson, and a notice saying so
join.take_params(page)  # `?class=CODE` (and a teacher's key) leave the address before the share link's
share.apply(page)  # a shared link's lesson values, text and model, before anything reads them
loaded = core.ensure_model()  # first, so the sidebar already names a model just loaded
sidebar.render()
join.sidebar()  # join a class, or the class and pseudonym with "leave"
if loaded is None:
    st.stop()
share.render(page)  # the link's notices and the sidebar's share button
if pacing.before_page(page):  # the join panel, the teacher's banner; a lesson not open yet stays shut
    page.run()
cache.freeze_after_first_run(page.url_path)  # keeps Streamlit's gc after each run cheap
persist.render()  # the sidebar's progress, kept in the browser and as a file
export.render()  # the figures' image format, the capture of the text as CSV or NPZ
