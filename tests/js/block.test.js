// static/views/block.js against lib/lessons/block.py (tests/views_fixtures.py wrote the expected values):
// the norm's two outputs the view draws are lib's RMSNorm and LayerNorm with the same gain.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { normLines } from "../../static/views/block.js";

const fx = JSON.parse(readFileSync(new URL("../fixtures/views/block.json", import.meta.url)));

function close(actual, expected, what) {
  assert.equal(actual.length, expected.length, what);
  for (let i = 0; i < expected.length; i++) {
    const tol = 1e-9 * Math.abs(expected[i]) + 1e-12;
    assert.ok(Math.abs(actual[i] - expected[i]) <= tol, `${what}[${i}]: ${actual[i]} vs ${expected[i]}`);
  }
}

test("normLines gives lib's RMSNorm and LayerNorm, with and without a bias, at every scale", () => {
  assert.equal(fx.norms.length, 4);
  for (const c of fx.norms) {
    const what = `d=${c.x.length} bias=${c.b !== null}`;
    const { rmsOut, layerOut } = normLines(c.x, c.g, c.b, c.mean, c.rms, c.std);
    close(rmsOut, c.rms_out, `${what} rms`);
    close(layerOut, c.layer_out, `${what} layer`);
  }
});
