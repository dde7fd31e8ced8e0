#!/usr/bin/env bash
# Records what tsum writes for a fixed matrix of commands, so that a change meant to keep
# behaviour (a code move, a new opt-in option) can be proved byte-identical with diff -r:
#
#   bash benchmarks/identity.sh /tmp/before          # on the old tree
#   bash benchmarks/identity.sh /tmp/after           # on the new tree
#   diff -r /tmp/before /tmp/after                   # empty: nothing changed
#
# Every command's stdout, stderr and exit code are kept; run.json and manifest.json are
# left out (they hold timings and versions by design). EXTRA="--policy seed" appends
# options to every replay, sweep and eval command (to prove an opt-in value changes nothing).
# CORPUS defaults to samples/ and ../shared/corpus/real (when present).
set -uo pipefail
out=${1:?usage: identity.sh OUTDIR}
here=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$out" && mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$here" || exit 1
real=${REAL:-../shared/corpus/real}
extra=${EXTRA:-}
export TSUM_HOME="$out/.home" TSUM_OFFLINE=1 NO_COLOR=1 COLUMNS=120

run() {  # run NAME CMD...: stdout, stderr and exit code of one command
  local name=$1
  shift
  "$@" >"$out/$name.stdout" 2>"$out/$name.stderr"
  echo $? >"$out/$name.rc"
  # Timings vary run to run; keep the line's shape, drop the seconds.
  sed -i -E 's/ in [0-9][0-9.]*s\b/ in Xs/g; s/[0-9][0-9.]* ?s elapsed/X elapsed/' \
    "$out/$name.stderr"
}


corpora=(samples)
[ -d "$real" ] && corpora+=("$real")
for c in "${corpora[@]}"; do
  tag=$(basename "$c")
  # shellcheck disable=SC2086
  {
    run "replay-text-$tag" tsum replay "$c" $extra
    run "replay-out-$tag" tsum replay "$c" --out "$out/out-$tag" --silent $extra
    run "replay-out-c1-$tag" tsum replay "$c" -j 1 --out "$out/out-c1-$tag" --silent $extra
    run "replay-dry-c1-$tag" tsum replay "$c" --dry-run -j 1 --out "$out/dry-c1-$tag" $extra
    run "replay-dry-c8-$tag" tsum replay "$c" --dry-run -j 8 --out "$out/dry-c8-$tag" $extra
    run "replay-dry-j1-$tag" tsum replay "$c" --dry-run --workers 1 --out "$out/dry1-$tag" $extra
    run "replay-dry-j2-$tag" tsum replay "$c" --dry-run --workers 2 --out "$out/dry2-$tag" $extra
    run "replay-current-$tag" tsum replay "$c" --measure current --checkpoint call \
      --out "$out/cur-$tag" --silent $extra
    run "sweep-table-$tag" tsum sweep "$c" --ratio 0.5,0.75 --max-context-tokens 8000,32000 \
      --debounce 1,3 $extra
    run "sweep-json-$tag" tsum sweep "$c" --ratio 0.5,0.75 --max-context-tokens 8000,32000 \
      --measure cumulative,current --json $extra
    run "sweep-report-$tag" tsum sweep "$c" --ratio 0.75 --report "$out/sweep-$tag.html" $extra
    run "eval-json-$tag" tsum eval "$c" --json --out "$out/eval-$tag" $extra
    run "eval-html-$tag" tsum eval "$c" --prompt zh --prompt en --html "$out/eval-$tag.html" $extra
    run "inspect-$tag" tsum inspect "$c" --json
    run "inspect-text-$tag" tsum inspect "$c"
  }
  run "diff-$tag" tsum diff "$out/out-$tag" "$out/cur-$tag"
  run "diff-md-$tag" tsum diff "$out/out-$tag" "$out/cur-$tag" --markdown
done
rm -rf "$out/.home"
# The timing files, and this run's own folder name wherever a command printed it.
find "$out" \( -name run.json -o -name manifest.json \) -delete
find "$out" -maxdepth 1 \( -name '*.stdout' -o -name '*.stderr' \) -exec sed -i "s#$out#OUT#g" {} +
echo "identity: $(find "$out" -type f | wc -l) files in $out"
