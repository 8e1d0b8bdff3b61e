"""A class, on screen: the learner's side and the teacher's page, over the class store (lib/classroom).

`membership` is the learner's side (joining, the sidebar's class box, the teacher's pacing, what is
reported); `teacher` is the teachers' page (start a class, watch it, pace it, export it);
`classroom.css` places the pacing banner.
"""
