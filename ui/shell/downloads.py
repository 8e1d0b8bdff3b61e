"""Downloads built when the learner clicks, kept until their browser has fetched them.

`st.download_button(data=callable)` builds the file only on a click: the browser asks the server
over the websocket, the server runs the callable, stores the file and sends its URL back, and the
browser then fetches the URL. Streamlit keeps such a file only until two script runs of *any*
session have ended (each run's end prunes files no session refers to: the first marks it, the next
deletes it). In a class, thirty learners' runs end several times a second, and a learner whose
fetch comes a little late (a busy server, a slow network) got "404: Not Found" instead of the file.

`built_when_clicked` wraps the callable: the file it builds is also listed among the clicking
learner's own files, so it lives until that learner's next run, as a file drawn on their page
does. This reaches into Streamlit's media file manager (private names of the pinned version; the
browser-level test tests/e2e/test_classroom_load.py fetches a file late and fails without it);
where that fails, the download works as before.
"""

from __future__ import annotations

import logging
from typing import Callable

from lib.serving.log import failure

log = logging.getLogger(__name__)
COORDINATES = "itt.download."  # + the file's name: one kept file per learner and name


def _keep(session_id: str, data: bytes, mime: str, file_name: str) -> None:
    """List the file Streamlit is about to store for this build among `session_id`'s files."""
    from streamlit.runtime import Runtime
    from streamlit.runtime.memory_media_file_storage import _calculate_file_id

    mgr = Runtime.instance().media_file_mgr
    file_id = _calculate_file_id(data, mime, file_name)  # the id Streamlit gives the stored file
    with mgr._lock:
        mgr._files_by_session_and_coord[session_id][COORDINATES + file_name] = file_id


def built_when_clicked(build: Callable[[], bytes | str], mime: str, file_name: str) -> Callable[[], bytes]:
    """`build` for `st.download_button(data=..., mime=mime, file_name=file_name)`, its file kept
    for the learner who clicked until their next run. Call it in the script run (it notes whose
    page it is on); a str is sent as UTF-8, as Streamlit does."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    session_id = ctx.session_id if ctx is not None else None

    def run() -> bytes:
        data = build()
        data = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        if session_id is not None:
            try:
                _keep(session_id, data, mime, file_name)
            except Exception as e:  # only a longer life for the file: without it, Streamlit's own
                failure(log, "keeping the download for its learner", e, once=True)
        return data
    return run
