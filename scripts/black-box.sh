#!/usr/bin/env bash
# The black-box run of docs/performance.md ("Running them › Black-box run") in one command: starts
# the OpenAI-compatible model server (20 tokens at once) and a hub as `npm start` runs it (config.yaml's
# defaults, log lines to a file, its own data directory), drives it with dist/bench/black-box.js,
# then stops both. After `npm run build`. Arguments go to black-box.js (e.g. --runs=5 --duration=5).
#   bash scripts/black-box.sh --runs=3 --duration=5
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# Waits until the file holds the pattern (or the process died), then prints the first match.
wait_for() {
  local file=$1 pattern=$2 pid=$3
  for _ in $(seq 300); do
    if grep -qoE "$pattern" "$file" 2>/dev/null; then grep -oE "$pattern" "$file" | head -1; return 0; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "black-box: no \"$pattern\" in $file:" >&2
  tail -n 20 "$file" >&2
  return 1
}

BENCH_MODEL_VENDOR=openai BENCH_ANSWER_TOKENS=20 node dist/bench/lib/model-server-entry.js > "$work/model.log" 2>&1 &
pids+=($!)
ready=$(wait_for "$work/model.log" 'ready http://127\.0\.0\.1:[0-9]+/v1 times [0-9]+' "${pids[0]}")
model_url=$(sed -E 's/ready (http[^ ]+) .*/\1/' <<< "$ready")
times_port=$(sed -E 's/.* times ([0-9]+)$/\1/' <<< "$ready")

# SERVICE_PORT=0: a free port, read back from the hub's "listening" line. A throw-away JWT secret, so
# the run works from a clean clone (before `npm start` has written .env).
SERVICE_JWT_SECRET=$(node -e 'process.stdout.write(require("crypto").randomBytes(32).toString("hex"))') \
  SERVICE_DATA_DIR="$work/data" SERVICE_PORT=0 SERVICE_LOG_FORMAT=json SERVICE_LLM_PROVIDER=openai \
  SERVICE_LLM_BASE_URL="$model_url" SERVICE_LLM_API_KEY=any SERVICE_LLM_MODEL=gpt-bench \
  SERVICE_RATE_LIMIT_DEFAULT=1000000/second SERVICE_RATE_LIMIT_AUTH_REGISTER=1000000/second \
  node dist/src/main.js > "$work/hub.log" 2>&1 &
hub=$!
pids+=("$hub")
listening=$(wait_for "$work/hub.log" '"listening":"[^"]*:[0-9]+"' "$hub")
port=$(sed -E 's/.*:([0-9]+)"$/\1/' <<< "$listening")

node dist/bench/black-box.js "http://127.0.0.1:$port" "$hub" "--model-times=http://127.0.0.1:$times_port/" "$@"
