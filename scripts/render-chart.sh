#!/usr/bin/env bash
# Renders the report's SVG chart to a PNG with headless Chromium (Debian's `chromium` package),
# for the docs. Not part of the tests: the chart test parses the SVG instead.
#   scripts/render-chart.sh [report/report.svg] [report/report.png]
set -euo pipefail
svg="${1:-report/report.svg}"
png="${2:-${svg%.svg}.png}"
[ -f "$svg" ] || { echo "render-chart: no such file: $svg (run ./modelopt report first)" >&2; exit 2; }
browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null; then browser="$b"; break; fi
done
[ -n "$browser" ] || { echo "render-chart: needs headless Chromium (apt-get install chromium)" >&2; exit 2; }
# the window is the chart's own size, read from its root element, so nothing is cut or scaled
read -r width height < <(sed -n 's/.*<svg[^>]* width="\([0-9]*\)" height="\([0-9]*\)".*/\1 \2/p' "$svg" | head -1)
width="${width:-1300}"; height="${height:-480}"
abs_svg="$(cd "$(dirname "$svg")" && pwd)/$(basename "$svg")"
abs_png="$(mkdir -p "$(dirname "$png")" && cd "$(dirname "$png")" && pwd)/$(basename "$png")"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
# --no-sandbox: containers often lack the user namespaces the sandbox needs; the file is our own
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$tmp" \
  --window-size="$width,$height" --screenshot="$tmp/shot.png" "file://$abs_svg" >/dev/null 2>&1
mv "$tmp/shot.png" "$abs_png"
echo "$abs_png"
