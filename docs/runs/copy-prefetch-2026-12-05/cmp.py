"""The tour's 'switched to' lines, side by side: `python3 cmp.py A.log B.log ...` prints each
switch's done / copying / worst frame per log and a count of the targets met; `--md NEW OLD`
prints the Markdown table of docs/results/switching.md (NEW's rows, OLD's done and copying)."""
import re
import sys

LINE = re.compile(
    r"switched to (.*?): (\d+) entities carried over in (\d+) frame\(s\), (\d+) ms after the "
    r"request; copying took (\d+) ms, at most ([\d.]+) ms in one frame \(its share ([\d.]+) ms\)")


def parse(path):
    rows = []
    for line in open(path):
        m = LINE.search(line)
        if m:
            rows.append((m.group(1), int(m.group(3)), int(m.group(4)), int(m.group(5)),
                         float(m.group(6)), float(m.group(7))))
    return rows


def mark(ok):
    return "✓" if ok else "✗"


def markdown(new, old):
    print("| switch | frames | done after the request, ms | copying in all, ms "
          "| worst frame, ms (its share) | before: done, copying, ms |")
    print("|---|---|---|---|---|---|")
    away = None
    for (name, frames, done, copy, worst, share), old_row in zip(new, old):
        if name.startswith("SoA"):
            label = f"back to soa (from {away})"
        else:
            away = name
            label = f"soa → {name}"
        print(f"| {label} | {frames} | {done} {mark(done <= 1500)} | {copy} {mark(copy <= 400)} "
              f"| {worst} {mark(worst <= 16)} ({share}) | {old_row[2]}, {old_row[3]} |")


if sys.argv[1] == "--md":
    markdown(parse(sys.argv[2]), parse(sys.argv[3]))
    sys.exit()
logs = [parse(p) for p in sys.argv[1:]]
for i, row in enumerate(logs[0]):
    print(f"{row[0][:40]:40s}", " | ".join(f"{d[i][2]:5d} {d[i][3]:4d} {d[i][4]:5.1f}" for d in logs))
for rows, path in zip(logs, sys.argv[1:]):
    done = [r[2] for r in rows]
    print(path, "done <= 1500 ms:", sum(x <= 1500 for x in done), "of", len(rows),
          "| copying <= 400 ms:", sum(r[3] <= 400 for r in rows),
          "| worst frame <= 16 ms:", sum(r[4] <= 16 for r in rows),
          "| slowest:", max(done), "ms")
