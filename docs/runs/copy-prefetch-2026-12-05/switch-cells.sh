#!/bin/sh
# One cell of `bench --only switch` per layout (the switch from `soa` into it at 1M, `soa`'s own
# from `aos`), with each build, alternated, twice. /tmp/el is `before`, /tmp/el-new3 `after`.
for i in 1 2; do
  for c in ecs-table ecs-sparse hecs shipyard flecs soa aos boxed; do
    for b in el el-new3; do
      printf '%s %s ' "$b" "$c"
      XDG_RUNTIME_DIR=/tmp "/tmp/$b" bench --worker switch --cell "$c:into:1000000" 2>/dev/null |
        python3 -c "import json,sys;d={r['metric']:r['p50'] for r in json.load(sys.stdin)};print(' '.join(f'{k}={d[k]:.1f}' for k in ('at_once_ms','copy_total_ms','copy_max_ms','done_ms')))"
    done
  done
done
