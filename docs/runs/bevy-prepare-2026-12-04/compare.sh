for cell in ecs-table:into:1000000 ecs-sparse:into:1000000 ecs-contiguous:into:1000000 ecs-table:into:10000000 ecs-sparse:into:10000000; do
 for b in el el-new el el-new; do
  echo -n "$cell $b "; /tmp/$b bench --worker switch --cell $cell 2>/dev/null | python3 -c "
import json,sys; r=json.loads(sys.stdin.read().strip().splitlines()[-1]); print({x['metric']:round(x['p50'],2) for x in r})"
 done
done
