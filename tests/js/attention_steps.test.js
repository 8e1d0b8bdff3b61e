// static/views/attention_steps.js against lib/lessons/attention.py's flash_attention (tests/views_fixtures.py
// wrote the expected walks from the same float32 scores the view is sent).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { flashWalk, lowerRows, tileStates, unpackF32 } from "../../static/views/attention_steps.js";

const fx = JSON.parse(readFileSync(new URL("../fixtures/views/attention_steps.json", import.meta.url)));

function close(actual, expected, what) {
  assert.equal(actual.length, expected.length, what);
  for (let i = 0; i < expected.length; i++) {
    const e = expected[i];
    if (e === null) { assert.equal(actual[i], -Infinity, `${what}[${i}]`); continue; }
    const tol = 1e-6 * Math.abs(e) + 1e-12; // 1e-6 relative
    assert.ok(Math.abs(actual[i] - e) <= tol, `${what}[${i}]: ${actual[i]} vs ${e}`);
  }
}

test("the fixtures cover tiles of one token, ragged edges, one tile for all, and windowed layers", () => {
  const kinds = fx.walks.map((c) => [c.block, c.t % c.block !== 0, c.block >= c.t, c.window !== null]);
  assert.ok(kinds.some((k) => k[0] === 1));
  assert.ok(kinds.some((k) => k[1]));
  assert.ok(kinds.some((k) => k[2]));
  assert.ok(kinds.some((k) => k[3]));
});

test("flashWalk keeps lib's running max, sum and rescaling, tile by tile, and skips the same tiles", () => {
  for (const c of fx.walks) {
    const rows = lowerRows(unpackF32(c.scores), c.t);
    const walk = flashWalk(rows, c.block, c.window);
    const what = `t=${c.t} block=${c.block} window=${c.window}`;
    assert.equal(walk.nQ, c.n_q_blocks, what);
    assert.deepEqual(walk.skipped, c.skipped, what);
    assert.equal(walk.steps.length, c.steps.length, what);
    walk.steps.forEach((s, i) => {
      const e = c.steps[i];
      assert.deepEqual([s.qBlock, s.kBlock, s.q0, s.q1, s.k0, s.k1], [e.q_block, e.k_block, e.q0, e.q1, e.k0, e.k1], what);
      close(s.rowMax, e.row_max, `${what} step ${i} max`);
      close(s.rowSum, e.row_sum, `${what} step ${i} sum`);
      close(s.rescale, e.rescale, `${what} step ${i} rescale`);
    });
  }
});

test("the tiles' states: skipped, done up to the step, the current one, the rest to do", () => {
  const c = fx.walks.find((w) => w.t === 13 && w.block === 4);
  const walk = flashWalk(lowerRows(unpackF32(c.scores), c.t), c.block, c.window);
  const z = tileStates(walk, 3);
  const counts = [0, 0, 0, 0];
  for (const row of z) for (const v of row) counts[v] += 1;
  assert.deepEqual(counts, [walk.steps.length - 3, walk.skipped.length, 2, 1]);
  const last = walk.steps[2];
  assert.equal(z[last.qBlock][last.kBlock], 3);
  for (const [qb, kb] of walk.skipped) assert.equal(z[qb][kb], 1);
  assert.equal(tileStates(walk, walk.steps.length).flat().filter((v) => v === 0).length, 0);
});

test("lowerRows reads one head's triangle out of several, row i holding keys 0..i", () => {
  const values = Float64Array.from({ length: 12 }, (_, i) => i); // two heads of n = 3 (6 values each)
  const rows = lowerRows(values, 3, 6);
  assert.deepEqual(rows.map((r) => Array.from(r)), [[6], [7, 8], [9, 10, 11]]);
});
