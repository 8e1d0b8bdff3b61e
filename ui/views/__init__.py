"""What the learner sees drawn, shared by every lesson: charts and the browser views.

`figures` is the course's one chart style (palette, layout rule, labels), with no streamlit in it;
`export` puts a plotly figure on the page (named for screen readers, saved from its mode bar) and
offers data out; `live_chart` redraws a chart in place; `chart_table` shows a chart's numbers as a
table; `browser` loads the browser views (static/views/); `follow` brings a section up to date with
a choice made higher up the page when the learner reaches it.
"""
