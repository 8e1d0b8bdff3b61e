// static/views/position.js against lib/lessons/rope.py (tests/views_fixtures.py wrote the expected values),
// for the bases of the course's models (SmolLM2, Gemma 3's global and windowed layers, the tests' tiny Gemma).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { angleWindow, angles, applyRope, clampSettings, frequencies, heatCells, rotate, sci1, score, scoreVsDistance }
  from "../../static/views/position.js";

const fx = JSON.parse(readFileSync(new URL("../fixtures/views/position.json", import.meta.url)));

function close(actual, expected, what, floor = 1e-12) {
  assert.equal(actual.length, expected.length, what);
  for (let i = 0; i < expected.length; i++) {
    const e = expected[i];
    const tol = 1e-6 * Math.abs(e) + floor; // 1e-6 relative
    assert.ok(Math.abs(actual[i] - e) <= tol, `${what}[${i}]: ${actual[i]} vs ${e}`);
  }
}

test("the fixtures cover every base of the course's models", () => {
  const bases = fx.cases.map((c) => `${c.d_head}/${c.base}`);
  for (const b of ["64/100000", "256/1000000", "256/10000", "16/10"]) assert.ok(bases.includes(b), b);
});

test("frequencies are lib's θ_i = base^(−2i/Dh); pair 0 turns 1 rad per token", () => {
  for (const c of fx.cases) {
    const theta = frequencies(c.d_head, c.base);
    close(theta, c.theta, `θ Dh=${c.d_head} base=${c.base}`);
    assert.equal(theta[0], 1);
  }
});

test("angles are m·θ_i at every position, as lib.lessons.rope.angles", () => {
  for (const c of fx.cases) {
    const a = angles(c.positions, frequencies(c.d_head, c.base));
    c.angles.forEach((row, i) => close(a[i], row, `angles m=${c.positions[i]} base=${c.base}`));
  }
});

test("applyRope turns rows as lib.lessons.rope.apply_rope, with the base's θ_i or a model's own", () => {
  for (const c of fx.cases) {
    const rows = c.x.length;
    const flat = Float64Array.from(c.x.flat());
    close(applyRope(flat, rows, frequencies(c.d_head, c.base)), c.rotated.flat(), `rotated base=${c.base}`, 1e-9);
    const scaled = Float64Array.from(c.theta, (t) => t / 4);
    close(applyRope(flat, rows, scaled), c.rotated_scaled.flat(), `rotated scaled base=${c.base}`, 1e-9);
    // Offsets into a packed [H, T, Dh] array: the second row block read in place.
    const d = c.d_head;
    close(applyRope(flat, 1, frequencies(d, c.base), d), rotate(flat.subarray(d, 2 * d), 0, frequencies(d, c.base)),
      "offset read at position 0");
  }
});

test("a rotation keeps the length; position 0 is the identity", () => {
  const c = fx.cases[0];
  const theta = frequencies(c.d_head, c.base);
  const x = Float64Array.from(c.x[0]);
  const n = (v) => Math.sqrt(v.reduce((s, a) => s + a * a, 0));
  assert.ok(Math.abs(n(rotate(x, 1234, theta)) - n(x)) < 1e-12);
  assert.deepEqual(Array.from(rotate(x, 0, theta)), Array.from(x));
});

test("scores and score by distance are lib's: only n − m counts", () => {
  for (const c of fx.cases) {
    const theta = frequencies(c.d_head, c.base);
    const q = Float64Array.from(c.q);
    const k = Float64Array.from(c.k);
    for (const s of c.scores) close([score(q, k, s.n, s.m, theta)], [s.score], `score n=${s.n} m=${s.m}`, 1e-9);
    close(scoreVsDistance(q, q, c.distances, theta), c.same, "same", 1e-9);
    close(scoreVsDistance(q, k, c.distances, theta), c.different, "different", 1e-9);
    assert.ok(Math.abs(score(q, k, 7, 3, theta) - score(q, k, 107, 103, theta)) < 1e-9);
  }
});

test("the angle window around m stays inside the context, angles mod 2π as the page drew them", () => {
  for (const c of fx.cases) {
    const theta = frequencies(c.d_head, c.base);
    for (const w of c.windows) {
      const got = angleWindow(theta, w.m, w.context, 256);
      assert.equal(got.positions.length, w.n);
      assert.equal(got.positions[0], w.lo);
      assert.ok(got.positions.includes(w.m) || w.m >= w.context);
      w.z.forEach((row, i) => close(w.cols.map((j) => got.z[i][j]), row, `window m=${w.m} pair ${i}`, 1e-9));
    }
  }
});

test("settings out of the model's range are brought back and said", () => {
  const { values, moved } = clampSettings({ n: 50000, k: 3, shift: 9000, head: 8, which: "v" },
    { n: 8191, k: 8191, shift: 8191, head: 3 });
  assert.deepEqual([values.n, values.k, values.shift, values.head, values.which], [8191, 3, 0, 3, "q"]);
  assert.deepEqual(moved.map((x) => x.name).sort(), ["head", "n", "shift"]);
  assert.ok(values.n + values.shift <= 8191);
  const ok = clampSettings({ m: 5, pair: 0 }, { m: 8191, pair: 31 });
  assert.equal(ok.moved.length, 0);
  assert.equal(clampSettings({ m: -4 }, { m: 10 }).values.m, 0);
});

test("the difference is written as Python's %.1e", () => {
  assert.equal(sci1(1.4210854715202004e-14), "1.4e-14");
  assert.equal(sci1(0), "0.0e+00");
  assert.equal(sci1(123456), "1.2e+05");
});

test("heatCells puts each panel on its colour range: −range at 0, 0 at one half, +range at 1", () => {
  // Two tokens, Dh = 2: before and after share the head's range (top), the change has its own (most).
  const v = { before: Float64Array.from([-2, 0, 1, 2]), after: Float64Array.from([2, -1, 0, 0]),
              change: Float64Array.from([4, -1, -1, -2]), top: 2, most: 4 };
  const [before, after, change] = heatCells(v, 2, 2);
  assert.deepEqual(before, [[0, 0.5], [0.75, 1]]);
  assert.deepEqual(after, [[1, 0.25], [0.5, 0.5]]);
  assert.deepEqual(change, [[1, 0.375], [0.375, 0.25]]);
});
