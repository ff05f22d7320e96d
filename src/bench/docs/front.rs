//! README's first table: what each of the front page's layouts costs per frame (f32, move +
//! regen, one thread) at 10k to 10M entities, and the count at which it breaks the 16.67 ms
//! budget. The answer a game programmer looks for first, in the units they use.

use crate::bench::report::format::{fmt_count, fmt_num};
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::bench::studies::crossings::breaks_budget_at;
use crate::bench::studies::layouts::{self, FRONT_PAGE};
use crate::workload::BUDGET_MS;

const COUNTS: [u64; 4] = [10_000, 100_000, 1_000_000, 10_000_000];

pub fn table(records: &[Record]) -> String {
    let swept: Vec<Record> = records
        .iter()
        .filter(|r| r.experiment == layouts::NAME)
        .cloned()
        .collect();
    let mut header = vec!["layout".to_string()];
    header.extend(COUNTS.iter().map(|&n| fmt_count(n)));
    header.push(format!("breaks {BUDGET_MS:.2} ms at"));
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let rows: Vec<Vec<String>> = FRONT_PAGE
        .iter()
        .map(|kind| {
            let mut row = vec![format!("{} (`{kind}`)", kind.label())];
            for n in COUNTS {
                let ms = Query::metric(Metric::FrameMs)
                    .layout(kind.name())
                    .scalar("f32")
                    .threads("1")
                    .n(n)
                    .find(&swept);
                row.push(ms.map_or("-".into(), |r| fmt_num(r.p50)));
            }
            row.push(breaks_budget_at(records, *kind, "f32").map_or("-".into(), fmt_count));
            row
        })
        .collect();
    format!(
        "ms per frame, f32, move + regen, one thread (a dash: not in this run):\n\n{}",
        crate::bench::report::format::table(&header, &rows)
    )
}
