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
    let mut titles = vec!["layout".to_string()];
    titles.extend(COUNTS.iter().map(|&n| fmt_count(n)));
    titles.push(format!("breaks {BUDGET_MS:.2} ms at"));
    let mut header: Vec<&str> = titles.iter().map(String::as_str).collect();
    let mut rows: Vec<Vec<String>> = FRONT_PAGE
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
    // A column the run has no figure for is left out and named, rather than shown as dashes.
    let mut missing = Vec::new();
    for column in (1..header.len()).rev() {
        if rows.iter().all(|row| row[column] == "-") {
            missing.push(header.remove(column).to_string());
            rows.iter_mut().for_each(|row| {
                row.remove(column);
            });
        }
    }
    let missing = if missing.is_empty() {
        String::new()
    } else {
        missing.reverse();
        format!(
            "\nNot in this run, so left out: the column{} {}. A full run of `entity-layouts bench` measures {}.\n",
            if missing.len() == 1 { "" } else { "s" },
            missing
                .iter()
                .map(|m| format!("\"{m}\""))
                .collect::<Vec<_>>()
                .join(" and "),
            if missing.len() == 1 { "it" } else { "them" },
        )
    };
    format!(
        "ms per frame, f32, move + regen, one thread:\n\n{}{missing}",
        crate::bench::report::format::table(&header, &rows)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::LayoutKind;

    #[test]
    fn the_table_leaves_out_and_names_the_columns_the_run_lacks() {
        let records: Vec<Record> = FRONT_PAGE
            .iter()
            .flat_map(|kind| {
                [10_000, 100_000, 1_000_000].map(|n| {
                    Record::new(layouts::NAME, *kind, "f32", n).value(
                        Metric::FrameMs,
                        "ms",
                        n as f64 / 1e6,
                    )
                })
            })
            .chain([
                Record::new("crossings", LayoutKind::Soa, "f32", 8_000_000).value(
                    Metric::BreaksBudgetAt,
                    "entities",
                    8e6,
                ),
            ])
            .collect();
        let md = table(&records);
        assert!(
            md.contains("| layout | 10,000 | 100,000 | 1,000,000 | breaks 16.67 ms at |"),
            "{md}"
        );
        assert!(
            md.contains("| SoA (Vec per field) (`soa`) | 0.0100 | 0.100 | 1.00 | 8,000,000 |"),
            "{md}"
        );
        assert!(
            md.contains("| Vec<Box<Entity>> (`boxed`) | 0.0100 | 0.100 | 1.00 | - |"),
            "{md}"
        );
        assert!(md.contains("the column \"10,000,000\". A full run"), "{md}");
    }
}
