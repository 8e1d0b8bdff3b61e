#!/usr/bin/env bash
# Vendor the JavaScript that bertviz's HTML loads, so the course works with no
# internet: bertviz 1.4.1 asks a CDN for require.js 2.3.6, d3 5.7.0 and
# jQuery 2.0.0. We take the same libraries from the npm registry and put them
# in static/vendor/ (git-ignored), which Streamlit serves at /app/static/vendor/
# (lib/lessons/bertviz_view.py rewrites the URLs).
#
# Versions:
#   requirejs 2.3.6  the one bertviz loads; the npm package ships it unminified.
#   d3 5.7.0         the one bertviz loads.
#   jquery 2.1.0     bertviz loads 2.0.0, which was never published to npm; 2.1.0
#                    is the earliest 2.x there, so the closest to what bertviz was
#                    written against (it only uses $() selectors, .val, .on, .text).
#   plotly.js-dist-min 3.7.0
#                    for the charts a slider redraws in place (ui/views/live_chart.py): the
#                    3.x line Streamlit 1.67 bundles (3.8.2 is not on npm). Without it
#                    those charts are drawn by st.plotly_chart, as the others.
#   axe-core 4.14.1  the accessibility engine the browser tests inject into every page
#                    (tests/e2e/test_accessibility.py); the app itself never loads it.
#
# Idempotent: nothing is fetched when the files and the version list are
# present. Never fatal: without npm, or when npm fails, it warns and exits 0,
# and bertviz falls back to its CDN (the rest of the app does not need these).
set -uo pipefail

cd "$(dirname "$0")/.."

DEST=static/vendor
PACKAGES=(requirejs@2.3.6 d3@5.7.0 jquery@2.1.0 plotly.js-dist-min@3.7.0 axe-core@4.14.1)
VERSIONS="${PACKAGES[*]}"

warn() { printf '[vendor_js] WARNING: %s\n' "$*" >&2; }
log() { printf '[vendor_js] %s\n' "$*"; }

if [ -s "$DEST/require.js" ] && [ -s "$DEST/d3.min.js" ] && [ -s "$DEST/jquery.min.js" ] && [ -s "$DEST/plotly.min.js" ] \
   && [ -s "$DEST/axe.min.js" ] \
   && [ "$(cat "$DEST/VERSIONS" 2>/dev/null)" = "$VERSIONS" ]; then
  log "already vendored ($VERSIONS)"
  exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
  warn "npm not found: bertviz views will load their JavaScript from a CDN (needs internet)."
  exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# npm pack only downloads the tarballs; nothing is installed or run.
if ! (cd "$tmp" && npm pack --silent "${PACKAGES[@]}" >/dev/null); then
  warn "npm pack failed: bertviz views will load their JavaScript from a CDN (needs internet)."
  exit 0
fi

# Paths inside the tarballs (npm puts everything under package/).
extract() { # tarball, member, destination
  mkdir -p "$tmp/x" && tar -xzf "$tmp/$1" -C "$tmp/x" "$2" && cp "$tmp/x/$2" "$tmp/$3"
}
if ! { extract requirejs-2.3.6.tgz package/require.js require.js \
       && extract d3-5.7.0.tgz package/dist/d3.min.js d3.min.js \
       && extract jquery-2.1.0.tgz package/dist/jquery.min.js jquery.min.js \
       && extract plotly.js-dist-min-3.7.0.tgz package/plotly.min.js plotly.min.js \
       && extract axe-core-4.14.1.tgz package/axe.min.js axe.min.js; }; then
  warn "unexpected tarball layout: bertviz views will load their JavaScript from a CDN."
  exit 0
fi

mkdir -p "$DEST"
cp "$tmp/require.js" "$tmp/d3.min.js" "$tmp/jquery.min.js" "$tmp/plotly.min.js" "$tmp/axe.min.js" "$DEST/"
echo "$VERSIONS" > "$DEST/VERSIONS"
log "vendored $VERSIONS into $DEST/"
