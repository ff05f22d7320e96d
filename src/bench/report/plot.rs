//! SVG plots of a report (plotters): frame time against entity count per layout with the
//! 16.67 ms budget line; ns per entity against entity count with the machine's caches marked as
//! the counts that fill them (the picture that explains the first: where each layout leaves each
//! cache); and ns per element against streams read for the width reversal.

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

use crate::bench::report::machine::Machine;
use crate::bench::report::metric::Metric;
use crate::bench::report::record::Record;
use crate::workload::EntityState;

use crate::workload::BUDGET_MS;

/// A vertical mark: its label and x.
type Mark = (String, f64);

/// `(file name, svg text)` for every plot the records allow; `machine` (where known) gives the
/// cache sizes the ns-per-entity plot marks.
/// `simd` holds the extra ns-per-entity lines (the SIMD experiment's wider tiers), drawn beside
/// the layouts' f32 lines.
pub fn plots(records: &[Record], machine: Option<&Machine>, simd: Series) -> Vec<(String, String)> {
    let mut simd = Some(simd);
    let mut out = Vec::new();
    for scalar in ["f32", "f64"] {
        let series = series(records, "layouts", scalar, Metric::FrameMs, |r| r.n as f64);
        if series.is_empty() {
            continue;
        }
        let title = format!("move + regen, {scalar}, 1 thread: p50 ms per frame");
        out.push((
            format!("layouts_{scalar}.svg"),
            draw(
                &title,
                "entities",
                "ms per frame",
                &series,
                true,
                Some(BUDGET_MS),
                &[],
            ),
        ));
        let mut per_entity: Series = series
            .iter()
            .map(|(name, points)| {
                let ns = points.iter().map(|&(n, ms)| (n, ms * 1e6 / n)).collect();
                (name.clone(), ns)
            })
            .collect();
        if scalar == "f32" {
            per_entity.extend(simd.take().unwrap_or_default());
        }
        let entity_bytes = if scalar == "f32" {
            size_of::<EntityState<f32>>()
        } else {
            size_of::<EntityState<f64>>()
        } as u64;
        let marks: Vec<Mark> = machine
            .map(|m| m.cache_bytes.as_slice())
            .unwrap_or_default()
            .iter()
            .map(|(level, bytes)| {
                let n = (bytes / entity_bytes) as f64;
                (
                    format!("{level} {} KiB ≈ {}", bytes / 1024, short_count(n)),
                    n,
                )
            })
            .collect();
        let title = format!(
            "move + regen, {scalar}, 1 thread: ns per entity; caches as the count of {entity_bytes}-byte entities that fills them"
        );
        out.push((
            format!("ns_per_entity_{scalar}.svg"),
            draw(
                &title,
                "entities",
                "ns per entity",
                &per_entity,
                true,
                None,
                &marks,
            ),
        ));
    }
    let width = series(records, "width", "f64", Metric::NsPerElement, |r| {
        r.param
            .trim_start_matches("streams=")
            .parse::<f64>()
            .unwrap_or(0.0)
    });
    if !width.is_empty() {
        out.push((
            "width.svg".into(),
            draw(
                "width reversal, 1M entities of 20 fields: ns per element read",
                "fields (streams) read",
                "ns per element",
                &width,
                false,
                None,
                &[],
            ),
        ));
    }
    out
}

/// Where each entity's data accesses were served (L1, the last level, memory), per layout, as
/// stacked horizontal bars: `(file name, svg)` for the `n` the counters ran at.
pub fn served_bars(n: u64, bars: &[(String, [f64; 3])]) -> (String, String) {
    let title = format!(
        "where each entity's data accesses are served, {} entities (simulated: cachegrind, 32 KiB L1d, 32 MiB LL)",
        short_count(n as f64)
    );
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (960, 600)).into_drawing_area();
        let _ = root.fill(&WHITE);
        draw_bars(&root, &title, bars).expect("drawing into a string cannot fail");
        root.present().expect("svg string backend");
    }
    (
        format!("counters_served_{}.svg", short_count(n as f64)),
        svg,
    )
}

fn draw_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    bars: &[(String, [f64; 3])],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let widest = bars
        .iter()
        .map(|(_, s)| s.iter().sum::<f64>())
        .fold(1.0, f64::max);
    let names: Vec<String> = bars.iter().map(|(n, _)| n.clone()).collect();
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 17))
        .margin(16)
        .margin_right(40)
        .x_label_area_size(44)
        .y_label_area_size(120)
        .build_cartesian_2d(0.0..widest * 1.25, -0.5..bars.len() as f64 - 0.5)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(bars.len())
        .y_label_formatter(&|y| {
            let i = y.round();
            // Top to bottom in the report's order.
            if (y - i).abs() < 0.01 && i >= 0.0 && (i as usize) < names.len() {
                names[names.len() - 1 - i as usize].clone()
            } else {
                String::new()
            }
        })
        .x_desc("data accesses per entity per frame (move + regen, f32)")
        .draw()?;
    let levels = [
        ("L1 hit", RGBColor(76, 156, 96)),
        ("last-level hit", RGBColor(230, 160, 40)),
        ("memory", RGBColor(200, 50, 50)),
    ];
    for (level, (label, color)) in levels.iter().enumerate() {
        let top = bars.len() as f64 - 1.0;
        let rects = bars.iter().enumerate().map(move |(i, (_, served))| {
            let start: f64 = served[..level].iter().sum();
            let y = top - i as f64;
            Rectangle::new(
                [(start, y - 0.35), (start + served[level], y + 0.35)],
                color.filled(),
            )
        });
        let color = *color;
        chart
            .draw_series(rects)?
            .label(*label)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled()));
    }
    chart.draw_series(bars.iter().enumerate().map(|(i, (_, served))| {
        Text::new(
            format!("{:.2} to memory", served[2]),
            (
                served.iter().sum::<f64>() + widest * 0.01,
                bars.len() as f64 - 1.0 - i as f64 + 0.15,
            ),
            ("sans-serif", 13).into_font(),
        )
    }))?;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
}

/// Named lines of `(x, y)` points.
pub type Series = Vec<(String, Vec<(f64, f64)>)>;

fn series(
    records: &[Record],
    experiment: &str,
    scalar: &str,
    metric: Metric,
    x: impl Fn(&Record) -> f64,
) -> Series {
    let mut out: Series = Vec::new();
    for r in records.iter().filter(|r| {
        r.experiment == experiment
            && r.scalar == scalar
            && r.metric == metric
            && r.threads == "1"
            && r.p50 > 0.0
    }) {
        let point = (x(r), r.p50);
        match out.iter_mut().find(|(name, _)| r.layout == name.as_str()) {
            Some((_, points)) => points.push(point),
            None => out.push((r.layout.name().to_string(), vec![point])),
        }
    }
    for (_, points) in &mut out {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

fn draw(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &Series,
    log_x: bool,
    budget: Option<f64>,
    marks: &[Mark],
) -> String {
    let mut svg = String::new();
    let points = series.iter().flat_map(|(_, p)| p.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in points {
        (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
    }
    if let Some(b) = budget {
        y1 = y1.max(b * 1.5);
    }
    let (y0, y1) = (y0 / 1.5, y1 * 1.5);
    {
        let root = SVGBackend::with_string(&mut svg, (960, 600)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let result = if log_x {
            draw_chart(
                &root,
                (title, x_desc, y_desc),
                (x0..x1).log_scale(),
                (y0..y1).log_scale(),
                &|x| count_label(*x),
                series,
                (budget, marks),
                SeriesLabelPosition::UpperLeft,
            )
        } else {
            draw_chart(
                &root,
                (title, x_desc, y_desc),
                0.0..x1 + 1.0,
                (y0..y1).log_scale(),
                &|x| format!("{x:.0}"),
                series,
                (budget, marks),
                SeriesLabelPosition::UpperRight,
            )
        };
        result.expect("drawing into a string cannot fail");
        root.present().expect("svg string backend");
    }
    svg
}

/// One chart on `root`: axes from the given coordinate specs, then the series and legend.
#[allow(clippy::too_many_arguments)]
fn draw_chart<DB, XS, YS>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    (title, x_desc, y_desc): (&str, &str, &str),
    x_spec: XS,
    y_spec: YS,
    x_labels: &dyn Fn(&f64) -> String,
    series: &Series,
    (budget, marks): (Option<f64>, &[Mark]),
    legend: SeriesLabelPosition,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: DrawingBackend,
    XS: AsRangedCoord<Value = f64>,
    YS: AsRangedCoord<Value = f64>,
    XS::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
    YS::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 20))
        .margin(16)
        .margin_right(40)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(x_spec, y_spec)
        .expect("non-empty ranges");
    let (x0, x1) = {
        let r = chart.x_range();
        (r.start, r.end)
    };
    let (y0, y1) = {
        let r = chart.y_range();
        (r.start, r.end)
    };
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(x_labels)
        .draw()?;
    for (i, (label, x)) in marks
        .iter()
        .enumerate()
        .filter(|(_, (_, x))| (x0..=x1).contains(x))
    {
        let grey = RGBColor(120, 120, 120).stroke_width(1);
        chart.draw_series(LineSeries::new(vec![(*x, y0), (*x, y1)], grey))?;
        // Near the bottom, where layouts rarely are, stepping up so neighbours do not overprint.
        let y = y0 * 1.12f64.powi(1 + i as i32 * 2);
        chart.draw_series(std::iter::once(Text::new(
            label.clone(),
            (*x, y),
            ("sans-serif", 13).into_font().color(&RGBColor(90, 90, 90)),
        )))?;
    }
    draw_lines(&mut chart, series, budget, x0, x1, legend)
}

fn draw_lines<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    series: &Series,
    budget: Option<f64>,
    x0: f64,
    x1: f64,
    legend: SeriesLabelPosition,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: DrawingBackend + 'a,
    X: plotters::coord::ranged1d::Ranged<ValueType = f64>,
    Y: plotters::coord::ranged1d::Ranged<ValueType = f64>,
{
    for (i, (name, points)) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(
                points.iter().copied(),
                color.stroke_width(2),
            ))?
            .label(name.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
    }
    if let Some(b) = budget {
        let red = RED.stroke_width(1);
        chart
            .draw_series(LineSeries::new(vec![(x0, b), (x1, b)], red))?
            .label(format!("{BUDGET_MS:.2} ms budget (60 fps)"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], red));
    }
    chart
        .configure_series_labels()
        .position(legend)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
}

/// A count in three characters or so: 1.5k, 33k, 1.0M.
fn short_count(n: f64) -> String {
    match n {
        n if n >= 1e6 => format!("{:.1}M", n / 1e6),
        n if n >= 1e4 => format!("{:.0}k", n / 1e3),
        n if n >= 1e3 => format!("{:.1}k", n / 1e3),
        n => format!("{n:.0}"),
    }
}

/// Axis labels for entity counts: 1k, 10k, 1M, 10M.
fn count_label(x: f64) -> String {
    match x {
        x if x >= 1e6 => format!("{}M", x / 1e6),
        x if x >= 1e3 => format!("{}k", x / 1e3),
        x => format!("{x}"),
    }
}
