// static/views/sampling.js against lib/lessons/sampling.py (tests/views_fixtures.py wrote the expected values).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { drawAt, entropy, filterSteps, seedUniform, softmax } from "../../static/views/sampling.js";

const fx = JSON.parse(readFileSync(new URL("../fixtures/views/sampling.json", import.meta.url)));

function close(actual, expected, what) {
  assert.equal(actual.length, expected.length, what);
  for (let i = 0; i < expected.length; i++) {
    const e = expected[i];
    const tol = 1e-6 * Math.abs(e) + 1e-15; // 1e-6 relative for probabilities
    assert.ok(Math.abs(actual[i] - e) <= tol, `${what}[${i}]: ${actual[i]} vs ${e}`);
  }
}

test("filterSteps gives lib's distributions and kept counts for every setting", () => {
  assert.ok(fx.filters.length >= 30);
  for (const c of fx.filters) {
    const what = `V=${c.logits.length} T=${c.temperature} k=${c.top_k} p=${c.top_p}`;
    const s = filterSteps(Float64Array.from(c.logits), c.temperature, c.top_k, c.top_p);
    assert.equal(s.greedy, c.greedy, what);
    close(s.model, c.model, `${what} model`);
    close(s.final, c.final, `${what} final`);
    close(s.cumulative, c.cumulative, `${what} cumulative`);
    assert.equal(s.keptK, c.kept_k, `${what} kept by top-k`);
    assert.equal(s.keptP, c.kept_p, `${what} kept in the end`);
  }
});

test("probabilities sum to one and -Infinity gets nothing", () => {
  const p = softmax(Float64Array.from([0, Math.log(3), -Infinity]));
  assert.ok(Math.abs(p[0] - 0.25) < 1e-15 && Math.abs(p[1] - 0.75) < 1e-15 && p[2] === 0);
  assert.ok(Math.abs(entropy(Float64Array.from([0.25, 0.25, 0.25, 0.25])) - Math.log(4)) < 1e-15);
});

test("seedUniform draws lib's number for every seed, exactly", () => {
  for (const { seed, u } of fx.seeds) assert.equal(seedUniform(seed), u, `seed ${seed}`);
});

test("drawAt lands on lib's token", () => {
  for (const { probs, u, token } of fx.draws) assert.equal(drawAt(Float64Array.from(probs), u), token, `${probs} ${u}`);
});
