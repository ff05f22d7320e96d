import re,sys
# usage: sortcmp.py LOG... ; prints per layout and order, for each log: done / copying / worst
# frame (its share), and where the log has it, "wait W/V": of the copying and of that worst
# frame, the time the app's thread waited for a core (logs from 2026-12-05's "waits" runs on).
pat=re.compile(r"sorted by (group|id): .* (\d+) ms after the request; copying took (\d+) ms, at most ([\d.]+) ms in one frame \(its share ([\d.]+) ms\)(?:; waiting for a core: (\d+) ms of it, ([\d.]+) ms in that frame)?")
sw=re.compile(r"switched to (.*?): ")
# The layout the app started in, from the log's first line: the talk may sort it before any
# switch (the app starts in its default layout unless --layout names one).
start=re.compile(r"entities in ([a-z0-9-]+), seed")
def parse(path):
    layout="?"; out={}
    for line in open(path):
        m=start.search(line)
        if m and layout=="?": layout=m.group(1); continue
        m=sw.search(line)
        if m and "sorted" not in line: layout=m.group(1); continue
        m=pat.search(line)
        if m: out[(layout,m.group(1))]=(int(m.group(2)),int(m.group(3)),float(m.group(4)),float(m.group(5)),m.group(6),m.group(7))
    return out
runs=[(p,parse(p)) for p in sys.argv[1:]]
keys=list(dict.fromkeys(k for _,r in runs for k in r))
print("| layout, order | "+" | ".join(p.replace('.log','') for p,_ in runs)+" |")
print("|---|"+"---|"*len(runs))
for k in keys:
    cells=[]
    for _,r in runs:
        v=r.get(k)
        if v is None: cells.append("-"); continue
        cell=f"{v[0]:,} / {v[1]} / {v[2]} ({v[3]})"
        if v[4] is not None: cell+=f" wait {v[4]}/{v[5]}"
        cells.append(cell)
    print(f"| {k[0]}, by {k[1]} | "+" | ".join(cells)+" |")
