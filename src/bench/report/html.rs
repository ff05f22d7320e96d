//! `index.html`: a run as one page to open from disk, as criterion's report is: the same report
//! as `results.md` (command, machine line, method, then every table), with every plot inline
//! after the header, a contents bar, and links to the run's `results.csv` and `results.json`. Self-contained: no script, no web font, nothing
//! fetched, so it opens offline, from a USB stick, on the venue's machine.

use pulldown_cmark::{CowStr, Event, HeadingLevel, Options, Parser, Tag, TagEnd, html};

/// The page for a run whose Markdown report is `markdown` and whose plots are `plots` (file
/// name, SVG text).
pub fn index_html(markdown: &str, plots: &[(String, String)]) -> String {
    let mut sections = Vec::new();
    let body = markdown_to_html(markdown, &mut sections);
    let mut out =
        String::with_capacity(body.len() + plots.iter().map(|p| p.1.len()).sum::<usize>());
    out.push_str(HEAD);
    out.push_str("<nav><strong>entity-layouts bench</strong>");
    out.push_str(
        " · data: <a href=\"results.csv\">results.csv</a> · <a href=\"results.json\">results.json</a> · <a href=\"results.md\">results.md</a>",
    );
    if !sections.is_empty() || !plots.is_empty() {
        out.push_str("<ul>");
        if !plots.is_empty() {
            out.push_str("<li><a href=\"#plots\">Plots</a></li>");
        }
        for (id, title) in &sections {
            out.push_str(&format!("<li><a href=\"#{id}\">{}</a></li>", escape(title)));
        }
        out.push_str("</ul>");
    }
    out.push_str("</nav>\n<main>\n");
    // The run's header (command, machine, method), then the plots, then every table: the
    // pictures are what a reader opens the page for.
    let first_section = body.find("<h2").unwrap_or(body.len());
    out.push_str(&body[..first_section]);
    if !plots.is_empty() {
        out.push_str("<h2 id=\"plots\">Plots</h2>\n<div class=\"plots\">\n");
        for (name, svg) in plots {
            let id = format!("plot-{}", slug(name.trim_end_matches(".svg")));
            out.push_str(&format!(
                "<figure id=\"{id}\">{}<figcaption><a href=\"{}\">{}</a></figcaption></figure>\n",
                inline_svg(svg),
                escape(name),
                escape(name)
            ));
        }
        out.push_str("</div>\n");
    }
    out.push_str(&body[first_section..]);
    out.push_str("</main>\n</body>\n</html>\n");
    out
}

/// The report's Markdown as HTML, every heading given an id; the second-level headings (the
/// experiments) are collected for the contents.
fn markdown_to_html(markdown: &str, sections: &mut Vec<(String, String)>) -> String {
    let mut events: Vec<Event> = Parser::new_ext(markdown, Options::ENABLE_TABLES).collect();
    let mut used = std::collections::HashSet::new();
    // Headings get ids from their text, so that the contents (and a reader's bookmark) link.
    let mut i = 0;
    while i < events.len() {
        if let Event::Start(Tag::Heading { level, .. }) = &events[i] {
            let level = *level;
            let mut title = String::new();
            let mut j = i + 1;
            while j < events.len() && !matches!(events[j], Event::End(TagEnd::Heading(_))) {
                if let Event::Text(t) | Event::Code(t) = &events[j] {
                    title.push_str(t);
                }
                j += 1;
            }
            let mut id = slug(&title);
            let mut n = 2;
            while used.contains(&id) {
                id = format!("{}-{n}", slug(&title));
                n += 1;
            }
            used.insert(id.clone());
            if level == HeadingLevel::H2 {
                sections.push((id.clone(), title));
            }
            if let Event::Start(Tag::Heading { id: slot, .. }) = &mut events[i] {
                *slot = Some(CowStr::from(id));
            }
            i = j;
        }
        i += 1;
    }
    let mut out = String::new();
    html::push_html(&mut out, events.into_iter());
    out
}

/// An SVG file's text as an inline element: the XML declaration dropped.
fn inline_svg(svg: &str) -> &str {
    svg.find("<svg").map_or(svg, |at| &svg[at..])
}

/// `Width: 1..20 fields` -> `width-1-20-fields`.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-').to_string();
    if out.is_empty() {
        "section".into()
    } else {
        out
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The page's head and style: system fonts, tables that scroll sideways on a narrow screen,
/// numbers in tabular figures, plots two to a row where there is room.
const HEAD: &str = r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>entity-layouts bench</title>
<style>
:root { color-scheme: light; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Ubuntu, sans-serif; color: #1d2129; background: #f4f5f7; }
nav { background: #1f2937; color: #e5e7eb; padding: 10px 24px; }
nav a { color: #93c5fd; }
nav ul { margin: 6px 0 0; padding: 0; list-style: none; display: flex; flex-wrap: wrap; gap: 4px 16px; font-size: 13px; }
main { max-width: 1400px; margin: 0 auto; padding: 8px 24px 48px; }
h1 { font-size: 26px; margin: 16px 0 8px; }
h2 { font-size: 20px; margin: 32px 0 8px; padding-top: 8px; border-top: 2px solid #d1d5db; }
h3 { font-size: 16px; margin: 20px 0 6px; }
p, li { max-width: 110ch; }
code { font: 13px ui-monospace, "DejaVu Sans Mono", monospace; background: #e5e7eb; padding: 1px 4px; border-radius: 3px; }
pre { background: #111827; color: #e5e7eb; padding: 10px 14px; overflow-x: auto; border-radius: 4px; }
pre code { background: none; color: inherit; padding: 0; }
table { border-collapse: collapse; margin: 10px 0 18px; background: #fff; font-size: 13px; font-variant-numeric: tabular-nums; display: block; overflow-x: auto; max-width: 100%; }
th, td { border: 1px solid #d1d5db; padding: 4px 8px; text-align: right; white-space: nowrap; }
th { background: #e5e7eb; position: sticky; top: 0; }
td:first-child, th:first-child { text-align: left; }
tbody tr:nth-child(even) { background: #f9fafb; }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 16px; }
figure { margin: 0; background: #fff; border: 1px solid #d1d5db; border-radius: 4px; padding: 8px; }
figure svg { width: 100%; height: auto; display: block; }
figcaption { font-size: 12px; color: #4b5563; margin-top: 4px; }
</style>
</head>
<body>
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_holds_tables_plots_and_contents_and_fetches_nothing() {
        let md = "# entity-layouts bench\n\nMachine: x\n\n## Layouts: 1k..10M\n\n| layout | ms |\n|---|---|\n| soa | 1.5 |\n\n## Width & fields\n\ntext\n";
        let plot = (
            "layouts_f32.svg".to_string(),
            "<?xml version=\"1.0\"?>\n<svg width=\"10\" height=\"10\"><line x1=\"0\"/></svg>"
                .to_string(),
        );
        let page = index_html(md, &[plot]);
        assert!(
            page.contains("<table>") && page.contains("<td>soa</td>"),
            "{page}"
        );
        assert!(page.contains("<h2 id=\"layouts-1k-10m\">"), "{page}");
        assert!(page.contains("<a href=\"#layouts-1k-10m\">Layouts: 1k..10M</a>"));
        assert!(page.contains("<a href=\"#width-fields\">Width &amp; fields</a>"));
        assert!(page.contains("<figure id=\"plot-layouts-f32\"><svg width=\"10\""));
        assert!(
            !page.contains("<?xml"),
            "the XML declaration is not valid inside HTML"
        );
        // Nothing from elsewhere: no script, no remote address.
        assert!(
            !page.contains("<script") && !page.contains("http://") && !page.contains("https://")
        );
    }

    #[test]
    fn repeated_headings_get_distinct_ids() {
        let page = index_html("## f32\n\n## f32\n", &[]);
        assert!(
            page.contains("id=\"f32\"") && page.contains("id=\"f32-2\""),
            "{page}"
        );
    }

    #[test]
    fn slugs_are_lowercase_words() {
        assert_eq!(slug("Width: 1..20 fields"), "width-1-20-fields");
        assert_eq!(
            slug("  ECS vs SoA (5 processes)  "),
            "ecs-vs-soa-5-processes"
        );
        assert_eq!(slug("…"), "section");
    }
}
