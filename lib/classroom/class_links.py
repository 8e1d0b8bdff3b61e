"""What a teacher hands out for a live class: the join link, its QR code, and the private teacher link.

The links are built from the address the teacher's browser used (lib.classroom.teaching.app_root), so they
work for the class when the teacher opened the course at the server's network address. The QR code
is drawn here, offline, by segno (no web service). The teacher link carries the class's secret in
its query (`key=`): the app takes it out of the address bar at once (ui/classroom/join.py).

Deliberately left out: anything Streamlit, and the class store itself (lib/classroom/classroom.py).
"""

from __future__ import annotations

import io

import segno

from lib.classroom.teaching import class_link

TEACHERS_PATH = "teachers"  # the teachers' page's address (ui/shell/nav.py)


def join_link(root: str, code: str, lang: str) -> str:
    """The link learners open to join the class (lesson 1, in the teacher's language).

    Example: join_link("http://10.0.0.5:8501", "K7QF3M", "it") -> "http://10.0.0.5:8501/?lang=it&class=K7QF3M"
    """
    return class_link(root, "", lang, **{"class": code})


def teacher_link(root: str, code: str, secret: str, lang: str) -> str:
    """The teacher's private link back to the class's dashboard, from any device.

    Example: teacher_link("http://h", "K7QF3M", "s3cr3t", "en") -> "http://h/teachers?lang=en&class=K7QF3M&key=s3cr3t"
    """
    return class_link(root, TEACHERS_PATH, lang, **{"class": code, "key": secret})


def qr_png(text: str, scale: int = 8) -> bytes:
    """A QR code of `text` as PNG bytes (medium error correction: readable from a projector).

    Example: qr_png("http://h/?class=K7QF3M")[:8] -> b"\\x89PNG\\r\\n\\x1a\\n"
    """
    out = io.BytesIO()
    segno.make(text, error="m", micro=False).save(out, kind="png", scale=scale, border=2)
    return out.getvalue()


def display_names(pseudonyms: list[str], anonymize: bool, template: str = "{n}") -> list[str]:
    """The names a dashboard shows, in the given order: the pseudonyms, or numbered stand-ins.

    Example: display_names(["ada", "bob"], True, "Learner {n}") -> ["Learner 1", "Learner 2"]
    """
    if not anonymize:
        return list(pseudonyms)
    return [template.replace("{n}", str(i + 1)) for i in range(len(pseudonyms))]
