"""What a learner keeps and hands on: progress, quizzes, shared links.

`persist` keeps progress through a reload, a new tab or a server restart (the browser's storage
and a file); `quiz_widget` draws a lesson's check-yourself questions and records the answers;
`share` builds and applies a link that opens the same lesson, text, model and widget values.
"""
