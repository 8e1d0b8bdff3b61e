// static/views/tokenization.js against lib/lessons/bpe.py (tests/views_fixtures.py wrote the expected values):
// the tokens alive at each step are the ones lib's segments give, and packed integers come back exactly.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { unpackInts } from "../../static/views/common.js";
import { alive, offsets, spacedHex } from "../../static/views/tokenization.js";

const fx = JSON.parse(readFileSync(new URL("../fixtures/views/tokenization.json", import.meta.url)));

test("unpackInts gives lib's whole numbers back exactly, at every width", () => {
  for (const { packed, values } of fx.ints) assert.deepEqual(Array.from(unpackInts(packed)), values);
});

test("the tokens alive at step k are lib's tokens after k merges, for every k", () => {
  assert.equal(fx.trainings.length, 2);
  for (const c of fx.trainings) {
    const ids = unpackInts(c.id);
    const born = unpackInts(c.born);
    const dies = unpackInts(c.dies);
    assert.equal(c.states.length, c.n + 1);
    c.states.forEach((expected, k) => {
      assert.deepEqual(alive(born, dies, k).map((i) => ids[i]), expected, `${c.pattern} step ${k}`);
    });
  }
});

test("each step's top pairs start where the ones before end", () => {
  const at = offsets(Uint16Array.from([3, 0, 2]));
  assert.deepEqual(Array.from(at), [0, 3, 3, 5]);
  assert.equal(offsets(fx.trainings[0].top_len).at(-1), fx.trainings[0].top_len.reduce((a, b) => a + b, 0));
});

test("bytes in hex are spaced as the chips' titles write them", () => {
  assert.equal(spacedHex("20746865"), "20 74 68 65");
  assert.equal(spacedHex("0A"), "0A");
  assert.equal(spacedHex(""), "");
});
