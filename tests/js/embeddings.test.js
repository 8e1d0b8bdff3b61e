// static/views/embeddings.js against lib/lessons/embeddings.py (tests/views_fixtures.py wrote the expected
// values): the k nearest the view shows are lib's nearest(k), read from nearest(30) by both
// measures; the rows it shows are the table's first columns.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { clamp, rowsAt, topNeighbours } from "../../static/views/embeddings.js";
import { unpackU16 } from "../../static/views/common.js";

const fx = JSON.parse(readFileSync(new URL("../fixtures/views/embeddings.json", import.meta.url)));

test("topNeighbours(k) is lib's nearest(k), by cosine and by distance, ties included", () => {
  assert.equal(fx.neighbours.length, 6);
  for (const c of fx.neighbours) {
    for (const [k, want] of Object.entries(c.expected)) {
      const got = topNeighbours({ [c.metric]: c.sent }, c.metric, Number(k));
      assert.deepEqual(got.map((r) => r.id), want.ids, `${c.metric} k=${k}`);
      assert.deepEqual(got.map((r) => r.rank), want.ids.map((_, i) => i + 1));
      got.forEach((r, i) => {
        assert.ok(Math.abs(r.cosine - want.cosine[i]) <= 1e-6, `${c.metric} k=${k} cosine ${i}`);
        assert.ok(Math.abs(r.distance - want.distance[i]) <= 1e-6 * Math.max(1, want.distance[i]), `${c.metric} k=${k} distance ${i}`);
        assert.equal(r.token, `t${r.id}`);
      });
    }
  }
});

test("rowsAt gives the table's first columns, at most as many as were sent", () => {
  const r = fx.rows;
  const values = unpackU16(r.packed);
  for (const [d, want] of Object.entries(r.slices)) {
    const got = rowsAt(values, r.n, r.n_dims, Number(d));
    assert.equal(got.length, want.length);
    got.forEach((row, i) => {
      assert.equal(row.length, want[i].length, `dims ${d} row ${i}`);
      row.forEach((v, j) => assert.ok(Math.abs(v - want[i][j]) <= r.tolerance, `dims ${d} [${i}, ${j}]`));
    });
  }
});

test("a remembered setting outside the model's range falls back", () => {
  assert.equal(clamp(30, 0, 2, 2), 2);
  assert.equal(clamp(1, 0, 2, 2), 1);
  assert.equal(clamp(undefined, 3, 30, 10), 10);
  assert.equal(clamp(2.5, 0, 5, 5), 5);
});
