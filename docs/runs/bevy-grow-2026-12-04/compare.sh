#!/bin/sh
# One cell of `bench --only grow` (0 to 10M in `ecs-table`, paced as the app grows), twice with
# each build, alternated. `before` is commit 398e3c3, `after` the commit that moves a Bevy world
# about to grow many times over into one prepared for the count.
for i in 1 2; do
  for b in before after; do
    echo "/tmp/el-$b"
    XDG_RUNTIME_DIR=/tmp "/tmp/el-$b/entity-layouts" bench --worker grow --cell ecs-table 2>&1 | tail -1 |
      python3 -c "import json,sys;print(' '.join(f\"{r['metric']}={r['p50']:.1f}\" for r in json.load(sys.stdin)))"
  done
done
