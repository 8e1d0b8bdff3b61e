// static/views/common.js against lib (tests/views_fixtures.py wrote the expected values).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { formatNumber, pct, unpackU16, fill, store } from "../../static/views/common.js";

const fx = JSON.parse(readFileSync(new URL("../fixtures/views/common.json", import.meta.url)));

test("unpackU16 reads lib/payload.py's packing value for value", () => {
  for (const { packed, values } of fx.packs) {
    assert.deepEqual(Array.from(unpackU16(packed)), values);
  }
});

test("a payload that says another length is refused", () => {
  const { packed } = fx.packs[0];
  assert.throws(() => unpackU16({ ...packed, n: packed.n + 1 }), /says/);
});

test("formatNumber writes every number as lib/quiz.py's format_number does", () => {
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

test("laidOut gives every chart ui/figures.py's laid_out layout", async () => {
  const { laidOut, wrap } = await import("../../static/views/common.js");
  assert.ok(fx.layouts.length >= 9);
  for (const { layout, laid_out } of fx.layouts) {
    assert.deepEqual(JSON.parse(JSON.stringify(laidOut(layout))), laid_out, JSON.stringify(layout));
  }
  assert.equal(wrap("Una riga d'esempio: softmax su 8 chiavi", 20), "Una riga d'esempio:<br>softmax su 8 chiavi");
});
