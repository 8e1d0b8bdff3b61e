"""The frame around every lesson: what a page stands on before it draws anything of its own.

`core` holds the language, the labels, the current model and the learner's text; `cache` is the
one caching adapter (the shared models and captures); `nav` the guided path and the navigation;
`sidebar`, `styles` and `page_lang` the page's frame; `lesson` a lesson's prose by id; `downloads`
files built when clicked.
"""
