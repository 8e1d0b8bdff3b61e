"""The live class: the class store and everything around it.

`classroom` keeps classes, pseudonymous learners and their first answers in a database, with its
tables in `classroom_schema` and its input rules in `classroom_input`; `class_board` turns what it
holds into the teacher's tables, `class_links` into the links and QR code handed out, and
`teaching` plans a class (time per lesson, machines per class). Nothing else in lib/ imports it.
"""
