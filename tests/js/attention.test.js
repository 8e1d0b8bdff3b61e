// static/views/attention.js: which layer bertviz's head view draws, read from its section's key, the
// one the Python side writes (ui/lessons/attention/sections.py bertviz_section:
// st.container(key=f"attention.bertviz_head_{layer}"), which Streamlit turns into a CSS class).
import { test } from "node:test";
import assert from "node:assert/strict";
import { bertvizLayer } from "../../static/views/attention.js";

function doc(...classNames) {
  const boxes = classNames.map((className) => ({ className }));
  return {
    querySelector(selector) {
      assert.equal(selector, '[class*="st-key-attention-bertviz_head_"]');
      return boxes.find((b) => b.className.includes("st-key-attention-bertviz_head_")) || null;
    },
  };
}

test("bertvizLayer reads the layer from the head view's section class", () => {
  assert.equal(bertvizLayer(doc("stVerticalBlock st-key-attention-bertviz_head_12 emotion-cache")), 12);
  assert.equal(bertvizLayer(doc("st-key-attention-bertviz_head_0")), 0);
});

test("bertvizLayer is null while bertviz's head view is closed or the class is not a layer", () => {
  assert.equal(bertvizLayer(doc("st-key-attention-bertviz_switch")), null);
  assert.equal(bertvizLayer(doc()), null);
  assert.equal(bertvizLayer(doc("st-key-attention-bertviz_head_x")), null);
});
