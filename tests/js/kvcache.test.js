// static/views/kvcache.js against lib/model/arithmetic.py and lib/lessons/kvcache.py (tests/views_fixtures.py
// wrote the expected values): bytes exactly, FLOPs and speeds to 1e-12, sizes as the page writes them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  attentionFlops, big, calculate, clamp, customSpec, decodeStep, denseVsMoe, flops, forwardFlopsPerToken, kib, kvBytes,
  kvPerToken, layerCounts, sci, size, trainingDays, trainingFlops, trainingMemory, usersThatFit, variantRows,
} from "../../static/views/kvcache.js";

const fx = JSON.parse(readFileSync(new URL("../fixtures/views/kvcache.json", import.meta.url)));

function close(actual, expected, what, rel = 1e-12) {
  assert.ok(Math.abs(actual - expected) <= rel * Math.abs(expected), `${what}: ${actual} vs ${expected}`);
}

test("the cache's bytes of every model, context and format are lib's, to the byte", () => {
  assert.ok(fx.models.length >= 19 && fx.contexts.length >= 20);
  for (const m of fx.models) {
    for (const [dtype, bytes] of Object.entries(fx.cache_dtypes)) {
      fx.contexts.forEach((n, i) => {
        const b = kvBytes(m.spec, n, bytes);
        assert.ok(Number.isSafeInteger(b), `${m.name} ${n} ${dtype}: ${b}`);
        assert.equal(b, m.bytes[dtype][i], `${m.name} at ${n} tokens in ${dtype}`);
      });
      assert.equal(kvPerToken(m.spec, bytes), m.per_token[dtype], `${m.name} per token in ${dtype}`);
    }
    assert.deepEqual(layerCounts(m.spec), m.counts, m.name);
  }
});

test("the calculator's weights, caches and users that fit are lib's calculate", () => {
  for (const m of fx.models) {
    for (const { given, out } of m.calc) {
      const c = calculate(m.spec, given.tokens, given.users, fx.cache_dtypes[given.cache], fx.weight_dtypes[given.weights],
                          given.card_gb);
      const what = `${m.name} ${JSON.stringify(given)}`;
      assert.equal(c.perUser, out.cache_per_user, what);
      assert.equal(c.perToken, out.cache_per_token, what);
      assert.equal(c.weights, out.weights, what);
      close(c.total, out.total, what, 1e-15);
      assert.equal(c.card, out.card, what);
      assert.equal(c.usersFit, out.users_fit, what);
      assert.equal(c.fits, out.fits, what);
    }
  }
});

test("users that fit divide as Python's floor division does, not as Math.floor(a / b)", () => {
  for (const f of fx.fits) assert.equal(usersThatFit(f.card, f.weights, f.per_user), f.fit, JSON.stringify(f));
});

test("FLOPs per token and over a prompt are lib's", () => {
  for (const m of fx.models) {
    fx.contexts.forEach((n, i) => {
      close(forwardFlopsPerToken(m.spec, n, m.spec.params || 1), m.forward[i], `${m.name} forward at ${n}`);
      close(attentionFlops(m.spec, n), m.attention[i], `${m.name} attention at ${n}`);
      close(attentionFlops(m.spec, n, true), m.causal[i], `${m.name} causal attention at ${n}`);
    });
  }
});

test("the six variants of the 8B: bytes, average per token and saving on MHA", () => {
  const variants = fx.variant_specs.map((spec, i) => ({ kind: fx.variants[0].rows[i].kind, spec }));
  for (const { tokens, cache, rows } of fx.variants) {
    const got = variantRows(variants, tokens, fx.cache_dtypes[cache]);
    rows.forEach((r, i) => {
      assert.equal(got[i].kind, r.kind);
      assert.equal(got[i].bytes, r.bytes, `${r.kind} at ${tokens} in ${cache}`);
      close(got[i].perToken, r.per_token, `${r.kind} per token`);
      close(got[i].saving, r.saving, `${r.kind} saving`);
    });
  }
});

test("the learner's own numbers price as lib prices the same config", () => {
  for (const c of fx.customs) {
    assert.deepEqual(customSpec(c.fields), c.spec, JSON.stringify(c.fields));
    fx.contexts.forEach((n, i) => assert.equal(kvBytes(customSpec(c.fields), n, 2), c.bytes[i]));
  }
});

test("serving, training and experts are lib's decode_step, training_* and dense_vs_moe", () => {
  for (const { given, out } of fx.steps) {
    const s = decodeStep(...given);
    close(s.seconds, out.seconds, "seconds");
    close(s.tokensPerS, out.tokens_per_s, "tokens/s");
    close(s.perUser, out.per_user, "each");
    close(s.cacheShare, out.cache_share, "share");
    close(s.cacheBytes, out.cache_bytes, "cache");
  }
  for (const t of fx.training) {
    close(trainingFlops(t.params, t.tokens), t.flops, "6ND");
    close(trainingDays(t.flops, t.gpus, t.peak, t.util), t.days, "days");
    for (const [key, parts] of Object.entries(t.memory)) {
      const [opt, stage] = key.split(".");
      const m = trainingMemory(t.params, opt, Number(stage) ? t.gpus : 1, Number(stage));
      for (const [k, v] of Object.entries(parts)) close(m[k], v, `${key} ${k}`);
    }
  }
  for (const m of fx.moe) {
    const got = denseVsMoe(m.total, m.active ?? undefined);
    close(got.flops, m.flops_per_token, "flops");
    close(got.memory, m.memory_bytes, "memory");
    close(got.active, m.active, "active");
  }
});

test("a typed number is clamped as lib/lessons/kvcache.py's clamp does", () => {
  for (const c of fx.clamps) {
    const got = clamp(c.given, c.lo, c.hi, c.integer);
    assert.equal(got.value, c.value, JSON.stringify(c));
    assert.equal(got.changed, c.changed, JSON.stringify(c));
  }
});

test("sizes, FLOPs and counts are written as the page writes them", () => {
  for (const w of fx.written) {
    const what = `${w.x} ${w.lang}`;
    assert.equal(size(w.x, w.lang), w.size, what);
    if (w.kib !== null) assert.equal(kib(w.x, w.lang), w.kib, what); // beyond 2^53 common.js writes the shortest form
    assert.equal(flops(w.x, w.lang), w.flops, what);
    assert.equal(big(w.x, w.lang, fx.units[w.lang]), w.big, what);
    if (w.sci !== null) assert.equal(sci(w.x, w.lang), w.sci, what);
  }
});
