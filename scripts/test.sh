#!/usr/bin/env bash
# The test command (README and .ci/run): unit and in-process API tests, then the
# compiled binary, then the end-to-end tests against that binary, on SQLite and again on
# PostgreSQL. The last line is
# "N passed, N failed, N skipped"; the exit code is non-zero on any failure. A skipped test
# (test.skip, test.todo, or a suite skipping what this machine lacks) is counted and named.
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p test-artifacts
# Each suite's output (run_suite); an earlier run's are removed, so a suite that does not run now is never read.
suite_logs=(test-artifacts/unit.log test-artifacts/web.log test-artifacts/e2e.log test-artifacts/e2e-postgres.log)
rm -f "${suite_logs[@]}"
bash scripts/install-test-tools.sh
passed=0; failed=0; skipped=0; status=0
# Per test and hook, for a loaded machine. Bun reads it from the command line only (not from bunfig.toml,
# and a preload's setDefaultTimeout reaches only the first file).
TIMEOUT_MS=90000

run_suite() { # name, then the command
  local name=$1; shift
  echo "== $name"
  "$@" 2>&1 | tee "test-artifacts/$name.log"
  local rc=${PIPESTATUS[0]}
  local p f
  p=$(grep -Eo '^ *[0-9]+ pass$' "test-artifacts/$name.log" | tail -1 | grep -Eo '[0-9]+' || echo 0)
  f=$(grep -Eo '^ *[0-9]+ fail$' "test-artifacts/$name.log" | tail -1 | grep -Eo '[0-9]+' || echo 0)
  k=$(grep -Eo '^ *[0-9]+ (skip|todo)$' "test-artifacts/$name.log" | awk '{ n += $1 } END { print n + 0 }')
  k=${k:-0}
  if [ "$k" -gt 0 ]; then echo "== $name: $k skipped:"; grep -E '^\((skip|todo)\)' "test-artifacts/$name.log" || true; fi
  passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + k))
  if [ "$rc" -ne 0 ]; then status=1; [ "$f" -eq 0 ] && failed=$((failed + 1)); fi
}

run_suite unit bun test --timeout "$TIMEOUT_MS" ./src
# The dashboard's own logic (CSV parsing and the like), outside the server's sources.
run_suite web bun test --timeout "$TIMEOUT_MS" ./web/app
echo "== build"
if bun run build; then
  SHORTLINK_BIN=dist/shortlink run_suite e2e bun test --timeout "$TIMEOUT_MS" ./test
  # The same end-to-end suite against one node on PostgreSQL: scripts/with-postgres.ts starts a
  # cluster of its own and every test server gets a database there. Not repeated: the files that
  # start their own PostgreSQL (cluster*, acme.cluster, bun-sql.pins, readiness.pg), migrate-store and
  # backup (their source is SQLite: on PostgreSQL backups are pg_dump's, which operations.e2e checks),
  # pages.browser (renders pages in-process, no store), and the SQLite side's own faults (disk-full,
  # click-writer-faults: their servers stay on SQLite in this run too).
  pg_files=()
  for f in test/*.test.ts test/dashboard/*.test.ts; do
    case "$f" in
      test/cluster*|test/readiness.pg.e2e.test.ts|test/backup.e2e.test.ts|test/acme.cluster.test.ts|test/bun-sql.pins.test.ts|test/migrate-store.e2e.test.ts|test/pages.browser.test.ts) ;;
      test/disk-full.e2e.test.ts|test/click-writer-faults.e2e.test.ts) ;;
      *) pg_files+=("./$f") ;;
    esac
  done
  SHORTLINK_BIN=dist/shortlink run_suite e2e-postgres bun scripts/with-postgres.ts bun test --timeout "$TIMEOUT_MS" "${pg_files[@]}"
else
  echo "build failed"; status=1; failed=$((failed + 1))
fi
# CI keeps only the tail of this output: name each failed test (with its file) next to the counts.
if [ "$failed" -gt 0 ]; then
  echo "== failed tests:"
  for log in "${suite_logs[@]}"; do
    [ -f "$log" ] || continue
    awk -v suite="$(basename "$log" .log)" '/^[^ ].*\.test\.tsx?:$/ { file = $0 } /^\(fail\)/ && !seen[$0]++ { print suite ": " file " " $0 }' "$log"
  done
fi
echo "$passed passed, $failed failed, $skipped skipped"
exit $status
