"""The app as a server shared by a class: settings, logging, caches, and work kept off the learners.

`settings` reads the operator's environment; `log` gives one line per survived failure;
`budget_cache` holds the captures and what is derived from them within one byte
budget, each value sized by `sizes`; `lens_service` and `lens_worker` work out the
logit lens ahead, in an idle process; `payload` packs the arrays sent to the browser's views.
"""
