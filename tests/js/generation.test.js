// static/views/generation.js: one step of a generation drawn from the data ui/lessons/sampling/figures.py's
// steps_data sends (the same shape as tests/test_figures_sampling.py's generation, written by hand).
import { test } from "node:test";
import assert from "node:assert/strict";
import { stepFigure, stepTable, stepTitle } from "../../static/views/generation.js";

const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"];
const step = (token, token_id) => ({ token, token_id, prob: 0.5, ids: [7, token_id, 9], tokens: ["<s>", token, "b"],
  model: [0.45, 0.4, 0.15], final: [0.3, 0.5, 0.2] });
const data = (lang) => ({
  key: "k", lang, palette: PALETTE, grey: "#B8B8B8",
  labels: { step: "step", title: "Step {step}: “{token}” ({p})", model: "the model", final: "after", y: "probability",
    rank: "rank", token: "token", table: "table", unavailable: "none" },
  steps: [step("␣cat", 5), step("<b>", 6), Object.assign(step(".", 8), { prob: 0.0123 })],
  layout: { barmode: "group", height: 340, yaxis: { title: { text: "probability" }, range: [0, 1.05] },
    xaxis: { tickangle: -45 } },
});

test("a step's chart is its candidates' probabilities, the model's beside the final ones, the drawn token marked", () => {
  const d = data("en");
  const fig = stepFigure(d, 1);
  const [model, final] = fig.data;
  assert.deepEqual(model.x, [0, 1, 2]);
  assert.deepEqual(final.x, [0, 1, 2]);
  assert.deepEqual(model.y, [0.45, 0.4, 0.15]);
  assert.deepEqual(final.y, [0.3, 0.5, 0.2]);
  assert.equal(model.marker.color, "#B8B8B8");
  assert.deepEqual(final.marker.color, [PALETTE[0], PALETTE[3], PALETTE[0]]);  // id 6 was drawn
  assert.deepEqual([model.name, final.name], ["the model", "after"]);
  assert.deepEqual(fig.layout.xaxis, { tickangle: -45, tickvals: [0, 1, 2], ticktext: ["&lt;s&gt;", "&lt;b&gt;", "b"] });
  assert.deepEqual(fig.layout.yaxis, d.layout.yaxis);
  assert.equal(fig.layout.barmode, "group");
  assert.equal(d.layout.title, undefined);  // the data sent is not changed by a draw
});

test("the title names the step, the token and its probability in the page's language", () => {
  assert.equal(stepFigure(data("en"), 1).layout.title.text, "Step 2: “&lt;b&gt;” (50%)");
  assert.equal(stepTitle(data("en"), 1, false), "Step 2: “<b>” (50%)");  // the chart's accessible name
  assert.equal(stepTitle(data("it"), 2), "Step 3: “.” (1,2%)");
});

test("the table lists every candidate with its rank, token and both probabilities", () => {
  const [head, rows, rowHeader] = stepTable(data("it"), 0);
  assert.deepEqual(head, ["rank", "token", "the model", "after"]);
  assert.equal(rowHeader, 1);
  assert.deepEqual(rows, [["1", "<s>", "0,45", "0,3"], ["2", "␣cat", "0,4", "0,5"], ["3", "b", "0,15", "0,2"]]);
});
