// static/views/common.js against lib (tests/views_fixtures.py wrote the expected values).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { formatNumber, pct, unpackU16, fill, store } from "../../static/views/common.js";

const fx = JSON.parse(readFileSync(new URL("../fixtures/views/common.json", import.meta.url)));

test("unpackU16 reads lib/serving/payload.py's packing value for value", () => {
  for (const { packed, values } of fx.packs) {
    assert.deepEqual(Array.from(unpackU16(packed)), values);
  }
});

test("a payload that says another length is refused", () => {
  const { packed } = fx.packs[0];
  assert.throws(() => unpackU16({ ...packed, n: packed.n + 1 }), /says/);
});

test("formatNumber writes every number as lib/course/quiz.py's format_number does", () => {
  for (const { value, digits, lang, text } of fx.numbers) {
    assert.equal(formatNumber(value, lang, digits), text, `${value} ${digits} ${lang}`);
  }
});

test("pct writes probabilities as the sampling lesson does", () => {
  for (const { p, lang, text } of fx.percents) assert.equal(pct(p, lang), text);
});

test("fill replaces the named placeholders and leaves unknown ones", () => {
  assert.equal(fill("p = {p}, {q}", { p: "0.9" }), "p = 0.9, {q}");
});

test("the page store tells its subscribers and keeps the last value", () => {
  const s = store();
  const seen = [];
  const stop = s.subscribe("attention.head", (v) => seen.push(v));
  s.set("attention.head", 3);
  s.set("attention.head", 5);
  stop();
  s.set("attention.head", 6);
  assert.deepEqual(seen, [3, 5]);
  assert.equal(s.get("attention.head"), 6);
  assert.equal(s.get("missing", "fallback"), "fallback");
});

test("laidOut gives every chart ui/views/figures.py's laid_out layout", async () => {
  const { laidOut, wrap } = await import("../../static/views/common.js");
  assert.ok(fx.layouts.length >= 9);
  for (const { layout, laid_out } of fx.layouts) {
    assert.deepEqual(JSON.parse(JSON.stringify(laidOut(layout))), laid_out, JSON.stringify(layout));
  }
  assert.equal(wrap("Una riga d'esempio: softmax su 8 chiavi", 20), "Una riga d'esempio:<br>softmax su 8 chiavi");
});

// The drawing helpers' pure parts: what a table, a radio group and a rich label are made of.

test("tableCells heads every column, and each row by the cell asked for", async () => {
  const { tableCells } = await import("../../static/views/common.js");
  const cells = tableCells(["rank", "token", "p"], [["1", " the", "0.5"], ["2", " a", "0.25"]]);
  assert.deepEqual(cells.head, [{ tag: "th", scope: "col", text: "rank" }, { tag: "th", scope: "col", text: "token" },
    { tag: "th", scope: "col", text: "p" }]);
  assert.deepEqual(cells.body[1], [{ tag: "th", scope: "row", text: "2" }, { tag: "td", text: " a" }, { tag: "td", text: "0.25" }]);
  // The sampling table names each row by its token, the second column.
  const byToken = tableCells(["rank", "token"], [["1", " the"]], 1);
  assert.deepEqual(byToken.body, [[{ tag: "td", text: "1" }, { tag: "th", scope: "row", text: " the" }]]);
  assert.deepEqual(tableCells(["a"], []).body, []);
});

test("radioOptions takes pairs or plain values and checks the one asked for, compared as text", async () => {
  const { radioOptions } = await import("../../static/views/common.js");
  assert.deepEqual(radioOptions([["q", "queries"], ["k", "keys"]], "k"), [["q", "queries", false], ["k", "keys", true]]);
  assert.deepEqual(radioOptions(["bf16", "fp8"], "bf16"), [["bf16", "bf16", true], ["fp8", "fp8", false]]);
  // A number kept in the store checks the button of the same value (values travel as text).
  assert.deepEqual(radioOptions([[1, "×1"], [4, "×4"]], 4).map((o) => o[2]), [false, true]);
  assert.deepEqual(radioOptions([[1, "×1"]], undefined).map((o) => o[2]), [false]);
});

test("richParts splits a label at its ** and fills its placeholders, values of any kind kept", async () => {
  const { richParts } = await import("../../static/views/common.js");
  assert.deepEqual(richParts("**Layer {layer}** reads {top}", { layer: "3", top: " Paris" }),
    [[false, [""]], [true, ["Layer ", "3", ""]], [false, [" reads ", " Paris", ""]]]);
  const node = { a: "code span" };
  assert.equal(richParts("merge {pair}", { pair: node })[0][1][1], node);
  assert.deepEqual(richParts("{missing} stays", {}), [[false, ["", "{missing}", " stays"]]]);
});

test("plotlyText writes < and > as entities, so a token like <s> shows", async () => {
  const { plotlyText } = await import("../../static/views/common.js");
  assert.equal(plotlyText("<s> a > b"), "&lt;s&gt; a &gt; b");
  assert.equal(plotlyText(42), "42");
});

test("linkedSettings: a share link's values win once, then the learner's kept choices", async () => {
  const { linkedSettings, keepSettings, store } = await import("../../static/views/common.js");
  const s = store();  // under node a store of its own, kept across the calls below
  const server = { temperature: 1, top_k: 50 };
  assert.deepEqual(linkedSettings("sampling", server, null, s), server);
  keepSettings("sampling", { temperature: 0.5 }, s);
  assert.deepEqual(linkedSettings("sampling", server, null, s), { temperature: 0.5, top_k: 50 });
  // A link: its values win over what was kept...
  const link = { temperature: 2, top_k: 5, from_link: "t1" };
  assert.equal(linkedSettings("sampling", link, null, s).temperature, 2);
  // ...once: a move after it is kept, and the same link sent again by a rerun does not undo it.
  keepSettings("sampling", { temperature: 0.7 }, s);
  assert.equal(linkedSettings("sampling", link, null, s).temperature, 0.7);
  // A link replaces what was kept with the fields named (the server's values fill the rest).
  keepSettings("block", { lens_layer: 4, norm_token: 2 }, s);
  const got = linkedSettings("block", { lens_layer: 1, lens_pos: 0, from_link: "t2" }, ["lens_layer"], s);
  assert.equal(got.lens_layer, 1);
  assert.equal(got.lens_pos, 0);
  assert.deepEqual(Object.keys(s.get("block.settings")), ["lens_layer"]);
});

test("scaleColour: a plotly colour scale's stops exactly, linear RGB between them, clamped", async () => {
  const { scaleColour } = await import("../../static/views/common.js");
  const scale = [[0.0, "#ffffff"], [0.5, "#808080"], [1.0, "#000000"]];
  assert.deepEqual(scaleColour(scale, 0), [255, 255, 255]);
  assert.deepEqual(scaleColour(scale, 0.5), [128, 128, 128]);
  assert.deepEqual(scaleColour(scale, 1), [0, 0, 0]);
  assert.deepEqual(scaleColour(scale, 0.25), [192, 192, 192]); // (255 + 128) / 2 = 191.5, rounded
  assert.deepEqual(scaleColour(scale, -3), [255, 255, 255]);
  assert.deepEqual(scaleColour(scale, 7), [0, 0, 0]);
});

test("scaleColour reads plotly.py's rgb(r, g, b) stops as it reads #rrggbb ones", async () => {
  const { scaleColour } = await import("../../static/views/common.js");
  // plotly.py's RdBu begins with these two stops (ui.views.figures.colorscale("RdBu")).
  const rgb = [[0.0, "rgb(103,0,31)"], [0.1, "rgb(178,24,43)"], [1.0, "rgb(5, 48, 97)"]];
  const hex = [[0.0, "#67001f"], [0.1, "#b2182b"], [1.0, "#053061"]];
  for (const v of [0, 0.05, 0.1, 0.55, 1]) assert.deepEqual(scaleColour(rgb, v), scaleColour(hex, v));
  assert.deepEqual(scaleColour(rgb, 0.05), [141, 12, 37]);
});

test("rgbOf: a colour as plotly writes it, [r, g, b]", async () => {
  const { rgbOf } = await import("../../static/views/common.js");
  assert.deepEqual(rgbOf("#67001f"), [103, 0, 31]);
  assert.deepEqual(rgbOf("rgb(5, 48, 97)"), [5, 48, 97]);
  assert.deepEqual(rgbOf([1, 2, 3]), [1, 2, 3]);
});

test("packedPixel: a colour as the 32-bit pixel a canvas's image holds (its RGBA bytes in order)", async () => {
  const { packedPixel } = await import("../../static/views/common.js");
  const bytes = (p) => [...new Uint8Array(Uint32Array.of(p).buffer)];
  assert.deepEqual(bytes(packedPixel([1, 2, 3])), [1, 2, 3, 255]);
  assert.deepEqual(bytes(packedPixel("#67001f")), [103, 0, 31, 255]);
  assert.deepEqual(bytes(packedPixel([255, 255, 255])), [255, 255, 255, 255]);
});

test("fillCells: each cell its colour over its box, the gap and a hidden cell left as the background", async () => {
  const { fillCells, packedPixel } = await import("../../static/views/common.js");
  const black = [0, 0, 0];
  const grey = (v) => [Math.round(v * 255), Math.round(v * 255), Math.round(v * 255)];
  // 2 x 2 cells, row 0 at the top, in 4 x 4 CSS pixels drawn at 2 device pixels each: 8 x 8 pixels.
  const geo = { xr: [-0.5, 1.5], yr: [1.5, -0.5], w: 4, h: 4, gap: 0 };
  const px = fillCells(new Uint32Array(64), 8, 8, [[0, 1], [null, 0.2]], geo, 2, grey, "#ffffff");
  const at = (x, y) => px[y * 8 + x];
  assert.equal(at(0, 0), packedPixel(black));          // row 0, column 0: value 0
  assert.equal(at(3, 3), packedPixel(black));
  assert.equal(at(4, 0), packedPixel([255, 255, 255])); // row 0, column 1: value 1
  assert.equal(at(0, 4), packedPixel("#ffffff"));       // row 1, column 0: hidden, the background
  assert.equal(at(7, 7), packedPixel(grey(0.2)));       // row 1, column 1
  // A gap of 1 CSS pixel: half a pixel each side of a cell, one device pixel, stays background.
  const gapped = fillCells(new Uint32Array(64), 8, 8, [[0, 0], [0, 0]], { ...geo, gap: 1 }, 2, grey, "#ffffff");
  assert.equal(gapped[0], packedPixel("#ffffff"));
  assert.equal(gapped[1 * 8 + 1], packedPixel(black));
  assert.equal(gapped[3 * 8 + 3], packedPixel("#ffffff"));
});

test("colourScale(scale)(v) is scaleColour(scale, v)", async () => {
  const { colourScale, scaleColour } = await import("../../static/views/common.js");
  const scale = [[0.0, "rgb(103,0,31)"], [0.1, "rgb(178,24,43)"], [0.5, "#f7f7f7"], [1.0, "rgb(5, 48, 97)"]];
  const of = colourScale(scale);
  for (let v = -0.1; v <= 1.1; v += 0.01) assert.deepEqual(of(v), scaleColour(scale, v));
});

test("cellBox: cell (i, j) of an n x n heatmap, y reversed (row 0 at the top), less the gap", async () => {
  const { cellBox } = await import("../../static/views/common.js");
  const n = 4;
  const geo = { xr: [-0.5, n - 0.5], yr: [n - 0.5, -0.5], w: 400, h: 200, gap: 2 };
  assert.deepEqual(cellBox(0, 0, geo), [1, 1, 98, 48]);
  assert.deepEqual(cellBox(3, 2, geo), [201, 151, 98, 48]);
  // Not reversed: row 0 at the bottom.
  assert.deepEqual(cellBox(0, 0, { ...geo, yr: [-0.5, n - 0.5] }), [1, 151, 98, 48]);
});

// The lazy table every chart's table alternative goes through (chartBox's `table`), on a tiny DOM
// of our own: elements that keep their children, listeners and a few properties.

function tinyDom() {
  const node = (tag) => ({
    tagName: tag.toUpperCase(), children: [], listeners: {}, style: {}, dataset: {}, attrs: {}, textContent: "",
    appendChild(c) { this.children.push(c); return c; },
    replaceChildren(...cs) { this.children = cs; },
    addEventListener(type, fn) { (this.listeners[type] = this.listeners[type] || []).push(fn); },
    setAttribute(k, v) { this.attrs[k] = String(v); },
  });
  globalThis.document = { createElement: node };
  return node;
}

/** A table's rows as text (stub elements): the header row, then each body row. */
const tableText = (t) => [t.children[0].children[0], ...t.children[1].children]
  .map((tr) => tr.children.map((c) => `${c.tagName.toLowerCase()}:${c.textContent}`));

test("chartBox's table is built only while its <details> is open, from the latest data", async () => {
  const { chartBox } = await import("../../static/views/common.js");
  const node = tinyDom();
  try {
    const c = chartBox(node("div"), { label: "Weights", tableLabel: "Show as a table" });
    assert.equal(c.details.tagName, "DETAILS");
    assert.equal(c.details.children[0].tagName, "SUMMARY");
    assert.equal(c.details.children[0].textContent, "Show as a table");
    assert.equal(c.fig.attrs["aria-label"], "Weights");
    const toggle = (open) => { c.details.open = open; for (const fn of c.details.listeners.toggle) fn(); };
    const built = [];
    const data = (v) => () => { built.push(v); return [["pair", "θ"], [["0", v]]]; };
    // Closed: two moves build nothing.
    c.table(data("1"));
    c.table(data("2"));
    assert.deepEqual(built, []);
    assert.deepEqual(c.box.children, []);
    // Opened: built once, from the latest data.
    toggle(true);
    assert.deepEqual(built, ["2"]);
    assert.equal(c.box.children.length, 1);
    assert.deepEqual(tableText(c.box.children[0]), [["th:pair", "th:θ"], ["th:0", "td:2"]]);
    // Open: each move rebuilds it at once; opening it again without a move builds nothing more.
    c.table(data("3"));
    assert.deepEqual(built, ["2", "3"]);
    assert.deepEqual(tableText(c.box.children[0])[1], ["th:0", "td:3"]);
    toggle(false);
    toggle(true);
    assert.deepEqual(built, ["2", "3"]);
    assert.equal(c.box.children.length, 1);
    // Closed again: moves are not built (the stale table is dropped); reopened, the latest one is.
    toggle(false);
    c.table(data("4"));
    c.table(data("5"));
    assert.deepEqual(built, ["2", "3"]);
    assert.deepEqual(c.box.children, []);
    toggle(true);
    assert.deepEqual(built, ["2", "3", "5"]);
    assert.deepEqual(tableText(c.box.children[0])[1], ["th:0", "td:5"]);
    // A make that fills the (emptied) box itself, as the scaling section's two tables do.
    c.table((box) => { box.appendChild(node("div")); box.appendChild(node("div")); });
    assert.deepEqual(c.box.children.map((e) => e.tagName), ["DIV", "DIV"]);
    // The row header asked for (the sampling table names each row by its token, the second cell).
    c.table(() => [["rank", "token"], [["1", " the"]], 1]);
    assert.deepEqual(tableText(c.box.children[0])[1], ["td:1", "th: the"]);
  } finally {
    delete globalThis.document;
  }
});
