#!/bin/bash
$1 bench --worker layouts --cell n=1000000 2>/dev/null | python3 -c "
import json,sys
t=sys.stdin.read(); i=t.find('[')
d={(r['layout'],r['scalar']):r['p50'] for r in json.loads(t[i:]) if r['metric']=='frame_ms'}
print(' '.join(f'{k[0]}/{k[1]}={d[k]:.2f}' for k in [('soa','f64'),('boxed','f64'),('boxed','f32'),('dyn-1','f32'),('dyn-1','f64'),('boxed-shuffled','f32')] if k in d))"
