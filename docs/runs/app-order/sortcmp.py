import re,sys
# usage: sortcmp.py LOG... ; prints per layout and order: done/copying/worst(share) for each log
pat=re.compile(r"sorted by (group|id): .* (\d+) ms after the request; copying took (\d+) ms, at most ([\d.]+) ms in one frame \(its share ([\d.]+) ms\)")
sw=re.compile(r"switched to (.*?): ")
names={"SoA (Vec per field)":"soa"}
def parse(path):
    layout="soa"; out={}
    for line in open(path):
        m=sw.search(line)
        if m and "sorted" not in line: layout=m.group(1); continue
        m=pat.search(line)
        if m: out[(layout,m.group(1))]=(int(m.group(2)),int(m.group(3)),float(m.group(4)),float(m.group(5)))
    return out
runs=[(p,parse(p)) for p in sys.argv[1:]]
keys=list(runs[0][1].keys())
print("| layout, order | "+" | ".join(p.replace('.log','') for p,_ in runs)+" |")
print("|---|"+"---|"*len(runs))
for k in keys:
    cells=[]
    for _,r in runs:
        v=r.get(k)
        cells.append("-" if v is None else f"{v[0]:,} / {v[1]} / {v[2]} ({v[3]})")
    print(f"| {k[0]}, by {k[1]} | "+" | ".join(cells)+" |")
