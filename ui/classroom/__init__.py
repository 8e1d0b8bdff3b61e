"""A class, on screen: the learner's side (joining, the sidebar's class box, pacing, what is reported)
and the teachers' page, over the class store (lib/classroom).

A teacher starts a class on the teachers' page (ui/classroom/teacher.py); a learner joins with the link
`/?class=CODE` (any page) or the code typed in the sidebar, and picks a pseudonym. From then on this
package reports to the class store (lib/classroom/classroom.py): each lesson opened (once per lesson and
session), the first answer to each quiz question, and the final quiz's score. The learner's own text
is never sent. Without a class nothing here touches the store and the course runs as before.

First answers: each is kept as given when it is given (`quiz.firsts`, with the quiz's state: the
option's index or the number read from the box, and its own verdict), in the session and in the
browser. Whatever first answers the session knows and the class has not been handed yet go at the
end of every run (`flush`): so answers given before joining go on joining, and again once the
browser's copy of the progress has come back (it may come after the join); the store keeps only the
first of each, so sending twice changes nothing.

Messages that need the learner (a wrong code, a class that is gone) stay in the sidebar until the
learner acts (joins, types a code, closes the message): a rerun, such as the one that restores the
browser's copy, does not take them away. A learner removed by the teacher, or whose class was
deleted, is told at their next report or by the idle check of the pacing; their answers stay in
their browser.

Membership lives in session state (`class.member`) and in the browser's local storage next to the
learner's progress (ui/learner/persist.py hands it over), so a reload keeps it. A new tab's session hears of
it only after its first run; so the class's code (not the learner's key) is also kept in a cookie,
`itt_class`, which the server reads at that first run: a lesson the class has not opened yet stays
shut from the first drawing, and the page runs again once the browser's copy has come back.

The store is shared by every session (`st.cache_resource`); what every page run asks of it (the
class's pacing) is cached for a few seconds, so thirty learners cost a few queries a second at most.
A database that does not answer never stops a lesson: the sidebar says the answers are not reaching
the class, and they are sent when it answers again.

`access` holds the store and this session's membership; `join` the join panel and the sidebar's class
box; `pacing` what stands above the page (the teacher's banner, a lesson kept shut); `reports` what
is sent to the class and the browser's copy of it. `teacher` is the teachers' page; `classroom.css`
places the pacing banner.
"""
