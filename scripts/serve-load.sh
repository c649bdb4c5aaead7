#!/usr/bin/env bash
# The server's bounded load test on the 125M synthetic model (docs/SERVER.md, "Load test"):
# makes the model once (./modelopt synth), starts ./modelopt serve on a loopback port, waits for
# /health, runs scripts/ServeLoad.java (C concurrent streaming clients, R requests in all), then
# stops the server with SIGTERM (its graceful drain) and exits with the load test's status.
#   scripts/serve-load.sh [--clients 32] [--requests 64] [--max-tokens 64] [--prompt-tokens 64]
# Environment: PORT (8011), TYPE (q8_0), SEATS (--max-num-seqs, 8), QUEUE (--max-waiting, 24),
# CTX (--max-model-len, 512), THREADS (all), JSON (a file for the figures), SERVE_ARGS (more serve options).
# Take the machine's benchmark lock first: flock /tmp/bench.lock scripts/serve-load.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
port="${PORT:-8011}"; type="${TYPE:-q8_0}"
model="$root/.modelopt-cache/serve-load/small125m-$type.gguf"
if [ ! -f "$model" ]; then
  mkdir -p "$(dirname "$model")"
  "$root/modelopt" synth --preset small125m --type "$type" --out "$model" >&2
fi
# the client needs a JDK 25 as the launcher does (a single-file program; ExecutorService closes itself)
java=""
for cand in "${JAVA_HOME:-}" /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/java-25-openjdk-amd64 /usr/lib/jvm/jdk-25*; do
  if [ -n "$cand" ] && [ -x "$cand/bin/java" ] && "$cand/bin/java" -version 2>&1 | grep -q 'version "2[5-9]'; then java="$cand/bin/java"; break; fi
done
[ -n "$java" ] || { echo "serve-load: needs JDK 25 or newer; set JAVA_HOME" >&2; exit 1; }
log="$(mktemp)"
# shellcheck disable=SC2086
"$root/modelopt" serve --model "$model" --port "$port" --served-model-name small125m --max-num-seqs "${SEATS:-8}" \
  --max-waiting "${QUEUE:-24}" --max-model-len "${CTX:-512}" ${THREADS:+--threads "$THREADS"} ${SERVE_ARGS:-} >"$log" 2>&1 &
server=$!
trap 'kill -TERM "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do
  if curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1; then break; fi
  kill -0 "$server" 2>/dev/null || { cat "$log" >&2; echo "serve-load: the server exited" >&2; exit 1; }
  sleep 0.5
done
echo "serve-load: $(grep -m1 'cpu runner' "$log" | sed 's/.*cpu runner: //')" >&2
status=0
"$java" "$root/scripts/ServeLoad.java" --url "http://127.0.0.1:$port" --model small125m ${JSON:+--json "$JSON"} "$@" || status=$?
kill -TERM "$server"; wait "$server" || true
trap - EXIT
grep -E 'draining|stopped|engine closed' "$log" >&2 || true
rm -f "$log"
exit "$status"
