"""The course's content as data: texts in each language, quiz banks, the learners' glossary.

`i18n` chooses the language and loads labels and lesson prose from assets/; `quiz` loads the
question banks and grades answers; `learner_glossary` orders and searches the glossary's entries.
"""
