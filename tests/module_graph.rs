//! The house has no circles. Every `crate::`, `super::` and `self::` path in the library and in
//! the storage core, and every path through a child module by its bare name, is an import from
//! one file (module) to another; together they must form no cycle, and the bench's tiers must
//! only look down (report, kit, the studies, what goes past them, the suite and the runner).
//!
//! A module may use its own ancestors: a parent declares the interface its children implement
//! (`layout/mod.rs` holds the `Layout` trait every layout file implements, as bevy_ecs's
//! `storage/mod.rs` does), so those edges are not counted. Every other edge is. Comments (doc
//! links included) and a file's `#[cfg(test)] mod tests` are not imports.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Module path (`bench::report::record`, `` for the crate root) -> its code, comments and tests
/// removed.
type Modules = BTreeMap<String, String>;

fn load(src: &Path) -> Modules {
    let mut out = Modules::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            // The binary's root is not a module of the library.
            if parts == ["main"] {
                continue;
            }
            if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
                parts.pop();
            }
            out.insert(
                parts.join("::"),
                code(&std::fs::read_to_string(&path).unwrap()),
            );
        }
    }
    out
}

/// The code of a file without its comments and its test module.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    let mut out = String::new();
    let mut in_block = false;
    for line in text.lines() {
        let mut line = line;
        if in_block {
            match line.find("*/") {
                Some(end) => {
                    in_block = false;
                    line = &line[end + 2..];
                }
                None => continue,
            }
        }
        if let Some(start) = line.find("/*") {
            in_block = !line[start..].contains("*/");
            line = &line[..start];
        }
        let line = line.find("//").map_or(line, |at| &line[..at]);
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The paths starting at `text[at..]`: `a::b::c`, or `a::{b, c::{d, e}}` expanded.
fn paths_at(text: &str, at: usize) -> Vec<Vec<String>> {
    let bytes: Vec<char> = text[at..].chars().collect();
    let mut i = 0;
    fn parse(bytes: &[char], i: &mut usize) -> Vec<Vec<String>> {
        let mut prefix = Vec::new();
        loop {
            let start = *i;
            while *i < bytes.len() && is_ident(bytes[*i]) {
                *i += 1;
            }
            if *i > start {
                prefix.push(bytes[start..*i].iter().collect::<String>());
            }
            if bytes.get(*i) == Some(&':') && bytes.get(*i + 1) == Some(&':') {
                *i += 2;
                while bytes.get(*i).is_some_and(|c| c.is_whitespace()) {
                    *i += 1;
                }
                if bytes.get(*i) == Some(&'{') {
                    *i += 1;
                    let mut out = Vec::new();
                    loop {
                        while bytes
                            .get(*i)
                            .is_some_and(|c| c.is_whitespace() || *c == ',')
                        {
                            *i += 1;
                        }
                        match bytes.get(*i) {
                            None => return out,
                            Some('}') => {
                                *i += 1;
                                return out;
                            }
                            _ => {}
                        }
                        let before = *i;
                        for tail in parse(bytes, i) {
                            out.push(prefix.iter().cloned().chain(tail).collect());
                        }
                        // `self as x`, `Name as Other`: skip to the next item.
                        while bytes.get(*i).is_some_and(|c| !matches!(c, ',' | '}' | '{')) {
                            *i += 1;
                        }
                        if *i == before {
                            *i += 1;
                        }
                    }
                }
                continue;
            }
            return vec![prefix];
        }
    }
    parse(&bytes, &mut i)
}

/// The modules `module` imports from, its own ancestors left out.
fn imports(module: &str, text: &str, modules: &Modules) -> BTreeSet<String> {
    let segments: Vec<&str> = if module.is_empty() {
        Vec::new()
    } else {
        module.split("::").collect()
    };
    let mut found = BTreeSet::new();
    let mut resolve = |path: &[String]| {
        let mut base: Vec<String> = segments.iter().map(|s| s.to_string()).collect();
        let mut rest = path;
        match rest.first().map(String::as_str) {
            Some("crate") => {
                base.clear();
                rest = &rest[1..];
            }
            Some("super") => {
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop();
                    rest = &rest[1..];
                }
            }
            Some("self") => rest = &rest[1..],
            // A child module by its bare name.
            _ => {}
        }
        let full: Vec<String> = base.into_iter().chain(rest.iter().cloned()).collect();
        for len in (1..=full.len()).rev() {
            let candidate = full[..len].join("::");
            if modules.contains_key(&candidate) {
                let ancestor = module == candidate || module.starts_with(&format!("{candidate}::"));
                if !ancestor {
                    found.insert(candidate);
                }
                return;
            }
        }
    };
    let children: Vec<&str> = modules
        .keys()
        .filter_map(|m| {
            let rest = if segments.is_empty() {
                Some(m.as_str())
            } else {
                m.strip_prefix(&format!("{module}::"))
            }?;
            (!rest.is_empty() && !rest.contains("::")).then_some(rest)
        })
        .collect();
    for (at, _) in text.char_indices() {
        if at > 0 {
            let before = text[..at].chars().next_back().unwrap();
            if is_ident(before) || before == ':' {
                continue;
            }
        }
        let rest = &text[at..];
        let starts = ["crate::", "super::", "self::"]
            .iter()
            .any(|p| rest.starts_with(p))
            || children.iter().any(|c| rest.starts_with(&format!("{c}::")));
        if starts {
            for path in paths_at(text, at) {
                resolve(&path);
            }
        }
    }
    found
}

fn edges(modules: &Modules) -> BTreeMap<String, BTreeSet<String>> {
    modules
        .iter()
        .map(|(m, text)| (m.clone(), imports(m, text, modules)))
        .collect()
}

/// The strongly connected components of more than one module (Tarjan).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[w].min(s.low[v]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.index[w].min(s.low[v]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack.remove(w);
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v.as_str()) {
            visit(&mut state, v);
        }
    }
    state.found
}

fn library() -> Modules {
    load(&Path::new(ROOT).join("src"))
}

#[test]
fn the_library_and_the_storage_core_import_in_no_circle() {
    for (name, modules) in [
        ("src", library()),
        ("core/src", load(&Path::new(ROOT).join("core/src"))),
    ] {
        assert!(modules.len() > 20, "{name}: only {} modules", modules.len());
        let graph = edges(&modules);
        let count: usize = graph.values().map(BTreeSet::len).sum();
        assert!(count > 80, "{name}: only {count} imports found");
        let found = cycles(&graph);
        assert!(
            found.is_empty(),
            "{name}: modules that import each other, directly or round a circle:\n{}",
            found
                .iter()
                .map(|c| c.join(" <-> "))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

/// Where a bench module sits: it may import its own tier and the tiers below.
fn tier(module: &str) -> Option<usize> {
    let rest = module.strip_prefix("bench::")?;
    let top = rest.split("::").next().unwrap();
    ["report", "kit", "studies", "beyond", "suite", "runner"]
        .iter()
        .position(|t| *t == top)
}

#[test]
fn the_bench_tiers_only_look_down_and_nothing_below_the_bench_imports_it() {
    let graph = edges(&library());
    let mut wrong = Vec::new();
    for (from, targets) in &graph {
        for to in targets {
            let into_bench = to == "bench" || to.starts_with("bench::");
            let from_bench = from == "bench" || from.starts_with("bench::");
            // The command line stands above everything, the bench included.
            let from_above = from == "commands" || from.starts_with("commands::");
            if into_bench && !from_bench && !from_above {
                wrong.push(format!("{from} -> {to}: below the bench, importing it"));
            }
            if let (Some(a), Some(b)) = (tier(from), tier(to))
                && b > a
            {
                wrong.push(format!("{from} -> {to}: a tier importing one above it"));
            }
        }
    }
    let tiers = graph.keys().filter(|m| tier(m).is_some()).count();
    assert!(tiers > 40, "only {tiers} bench modules in tiers");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The tiers of src/, from the bottom: the runtime (the live simulation), the tools that run it
/// (verify, soak, scripts, counters), the bench, then the command line and the windowed app (the
/// binary's). A module may import its own tier and the tiers below (the storage core, a crate of
/// its own, is below them all).
fn src_tier(module: &str) -> Option<usize> {
    let top = module.split("::").next().unwrap();
    [
        &["runtime"][..],
        &["tools"],
        &["bench"],
        &["commands", "app"],
    ]
    .iter()
    .position(|tier| tier.contains(&top))
}

#[test]
fn the_library_tiers_only_look_down() {
    let graph = edges(&library());
    let mut wrong = Vec::new();
    for (from, targets) in &graph {
        for to in targets {
            if let (Some(a), Some(b)) = (src_tier(from), src_tier(to))
                && b > a
            {
                wrong.push(format!("{from} -> {to}: a tier importing one above it"));
            }
        }
    }
    let placed = graph.keys().filter(|m| src_tier(m).is_some()).count();
    let unplaced: Vec<&String> = graph
        .keys()
        .filter(|m| !m.is_empty() && src_tier(m).is_none())
        .collect();
    assert!(
        unplaced.is_empty(),
        "modules outside every tier: {unplaced:?}"
    );
    assert!(placed > 100, "only {placed} modules in tiers");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The root of src/ shows the tiers and holds nothing else: the binary's and the library's
/// roots, and one folder per tier (the app is the binary's).
#[test]
fn src_holds_its_roots_and_one_folder_per_tier() {
    let src = Path::new(ROOT).join("src");
    let mut files = Vec::new();
    let mut folders = Vec::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            folders.push(name);
        } else {
            files.push(name);
        }
    }
    files.sort();
    folders.sort();
    assert_eq!(files, ["lib.rs", "main.rs"]);
    assert_eq!(folders, ["app", "bench", "commands", "runtime", "tools"]);
}

/// One module style: a module with children is a folder with a `mod.rs`, never `name.rs` beside
/// a folder `name/`.
#[test]
fn every_module_with_children_is_a_folder_with_a_mod_rs() {
    let mut stack = vec![
        Path::new(ROOT).join("src"),
        Path::new(ROOT).join("core/src"),
    ];
    let mut wrong = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path.with_extension("rs").exists() {
                    wrong.push(path.display().to_string());
                }
                stack.push(path);
            }
        }
    }
    assert!(wrong.is_empty(), "name.rs beside name/: {wrong:?}");
}

#[test]
fn the_checker_finds_a_circle_and_ignores_comments_tests_and_ancestors() {
    let modules: Modules = [
        ("", ""),
        ("a", "use crate::b::{X, c::Y};\n"),
        (
            "b",
            "/// [`crate::a`] in a doc link is not an import\nuse super::d;\n",
        ),
        ("b::c", "use super::Trait; // its parent: not counted\n"),
        ("d", "fn f() { a::g(); }\n"),
        ("e", "use crate::{a, b::c};\n"),
    ]
    .into_iter()
    .map(|(m, t)| (m.to_string(), code(t)))
    .collect();
    let graph = edges(&modules);
    assert_eq!(graph["a"], BTreeSet::from(["b".into(), "b::c".into()]));
    assert_eq!(graph["b"], BTreeSet::from(["d".into()]));
    assert!(graph["b::c"].is_empty(), "{:?}", graph["b::c"]);
    assert_eq!(graph["e"], BTreeSet::from(["a".into(), "b::c".into()]));
    // `d` names `a` by a bare path from the root's children only: from `d` it is not a child.
    assert!(graph["d"].is_empty());
    assert!(cycles(&graph).is_empty());

    let mut with_circle = modules.clone();
    with_circle.insert("d".into(), code("use crate::a::g;\n"));
    let found = cycles(&edges(&with_circle));
    assert_eq!(found, vec![vec!["a".to_string(), "b".into(), "d".into()]]);

    let tested = code("use crate::x;\n#[cfg(test)]\nmod tests {\n    use crate::a;\n}\n");
    assert!(!tested.contains("crate::a") && tested.contains("crate::x"));
    assert_eq!(tier("bench::report::record"), Some(0));
    assert_eq!(tier("bench::beyond::seek"), Some(3));
    assert_eq!(tier("counters"), None);
    assert_eq!(src_tier("runtime::swarm::order"), Some(0));
    assert_eq!(src_tier("commands::bench"), Some(3));
    assert_eq!(src_tier("swarm"), None);
}
