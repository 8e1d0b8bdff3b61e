// One step of a generation, picked by a slider answered in the browser.
//
// The server sends every step's candidates once with the generation (ui/lessons/sampling/figures.py's
// steps_data: the model's probabilities and the final ones after the filters, in the model's order);
// moving the step redraws the chart and its table from them, with no script run on the server.
// tests/js/generation.test.js checks the chart against the data.

import { chartBox, clearView, drawChart, el, fill, formatNumber, keepFocus, pct, perFrame, plotlyText, slider,
  viewBox } from "./common.js";

/** The chart's title for step `index` (0-based), the label's template filled: for plotly (`forPlotly`,
 * the token's angle brackets as entities) or as plain text (the chart's accessible name). */
export function stepTitle(data, index, forPlotly = true) {
  const s = data.steps[index];
  return fill(data.labels.title, { step: formatNumber(index + 1, data.lang),
    token: forPlotly ? plotlyText(s.token) : s.token, p: pct(s.prob, data.lang) });
}

/** Step `index` as a plotly figure: the model's probabilities of the candidates (grey) beside the final
 * ones after the filters, the token drawn in its own colour. */
export function stepFigure(data, index) {
  const s = data.steps[index];
  const L = data.labels;
  const x = s.ids.map((_, i) => i);
  const colours = s.ids.map((id) => (id === s.token_id ? data.palette[3] : data.palette[0]));
  const traces = [
    { type: "bar", x, y: s.model.slice(), name: L.model, marker: { color: data.grey } },
    { type: "bar", x, y: s.final.slice(), name: L.final, marker: { color: colours } },
  ];
  const layout = Object.assign({}, data.layout, {
    title: { text: stepTitle(data, index) },
    xaxis: Object.assign({}, data.layout.xaxis, { tickvals: x, ticktext: s.tokens.map(plotlyText) }),
  });
  return { data: traces, layout };
}

/** The chart's table: each candidate, its token the row's header ([head, rows, rowHeader] for table). */
export function stepTable(data, index) {
  const s = data.steps[index];
  const L = data.labels;
  const lang = data.lang;
  const rows = s.tokens.map((tok, i) => [formatNumber(i + 1, lang), tok, formatNumber(s.model[i], lang, 4),
    formatNumber(s.final[i], lang, 4)]);
  return [[L.rank, L.token, L.model, L.final], rows, 1];
}

function build(root, data) {
  clearView(root);
  const box = viewBox(root, "itt-generation", "generation");
  const n = data.steps.length;
  // One step has nothing to pick (a range input needs two values).
  const step = n > 1 ? slider(el(box, "div", "itt-controls"), { label: data.labels.step, min: 1, max: n, step: 1,
    value: 1, format: (v) => formatNumber(v, data.lang), testid: "sampling.gen_step" }) : null;
  const { fig, plot, table: toTable } = chartBox(box, { tableLabel: data.labels.table, height: data.layout.height });
  const update = () => {
    const index = step ? Number(step.value) - 1 : 0;
    const spec = stepFigure(data, index);
    fig.setAttribute("aria-label", stepTitle(data, index, false));
    box.dataset.state = String(index + 1);
    drawChart(plot, data.plotly, spec, data.config, data.labels.unavailable)
      .then((drawn) => { if (drawn) box.dataset.drawn = String(index + 1); });
    toTable(() => stepTable(data, index));
  };
  if (step) step.addEventListener("input", perFrame(update));
  update();
}

export function mount(root, data, component) {
  // The same generation again (a rerun of the page): the step the learner picked stays.
  if (root.__ittKey === data.key) return;
  root.__ittKey = data.key;
  keepFocus(root, () => build(root, data));
}
