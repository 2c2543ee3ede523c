//! The lab drawn as SVG: a force-directed layout (Fruchterman–Reingold) computed here, deterministic
//! (nodes start on a circle in name order, no randomness) and bounded in iterations; nodes coloured
//! by their last result, links by the last link check (`netgw links`' comparison).

use crate::links::{Declared, LinkReport};
use maud::{Markup, html};
use netgw_models::topology::Topology;
use std::collections::{BTreeMap, BTreeSet};

/// The drawing's size (SVG user units; it scales to the screen).
pub const WIDTH: f64 = 800.0;
pub const HEIGHT: f64 = 520.0;
const MARGIN: f64 = 60.0;
const RADIUS: f64 = 24.0;
/// Layout iterations: enough for a lab of a few dozen nodes to settle; the cost is bounded.
const ITERATIONS: usize = 300;

/// Positions for `n` nodes joined by `edges` (indices), inside the drawing's margins.
pub fn layout(n: usize, edges: &[(usize, usize)]) -> Vec<(f64, f64)> {
    if n == 0 {
        return Vec::new();
    }
    let (w, h) = (WIDTH - 2.0 * MARGIN, HEIGHT - 2.0 * MARGIN);
    let k = (w * h / n as f64).sqrt();
    let mut pos: Vec<(f64, f64)> = (0..n)
        .map(|i| {
            let a = std::f64::consts::TAU * i as f64 / n as f64;
            (w / 2.0 + w / 3.0 * a.cos(), h / 2.0 + h / 3.0 * a.sin())
        })
        .collect();
    let mut temp = w / 10.0;
    for _ in 0..ITERATIONS {
        let mut disp = vec![(0.0f64, 0.0f64); n];
        for i in 0..n {
            for j in 0..n {
                if i == j {
                    continue;
                }
                let (dx, dy) = (pos[i].0 - pos[j].0, pos[i].1 - pos[j].1);
                let d = (dx * dx + dy * dy).sqrt().max(0.01);
                let f = k * k / d;
                disp[i].0 += dx / d * f;
                disp[i].1 += dy / d * f;
            }
        }
        for &(a, b) in edges {
            if a == b || a >= n || b >= n {
                continue;
            }
            let (dx, dy) = (pos[a].0 - pos[b].0, pos[a].1 - pos[b].1);
            let d = (dx * dx + dy * dy).sqrt().max(0.01);
            let f = d * d / k;
            disp[a].0 -= dx / d * f;
            disp[a].1 -= dy / d * f;
            disp[b].0 += dx / d * f;
            disp[b].1 += dy / d * f;
        }
        for (p, d) in pos.iter_mut().zip(&disp) {
            let len = (d.0 * d.0 + d.1 * d.1).sqrt().max(0.01);
            p.0 = (p.0 + d.0 / len * len.min(temp)).clamp(0.0, w);
            p.1 = (p.1 + d.1 / len * len.min(temp)).clamp(0.0, h);
        }
        temp = (temp * 0.98).max(0.5);
    }
    fit(&mut pos, w, h);
    pos.into_iter()
        .map(|(x, y)| (x + MARGIN, y + MARGIN))
        .collect()
}

/// Stretch the layout to fill the area (a settled layout may huddle in part of it).
fn fit(pos: &mut [(f64, f64)], w: f64, h: f64) {
    let (min_x, max_x) = pos
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let (min_y, max_y) = pos
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.1), b.max(p.1)));
    for p in pos.iter_mut() {
        p.0 = if max_x - min_x < 1.0 {
            w / 2.0
        } else {
            (p.0 - min_x) / (max_x - min_x) * w
        };
        p.1 = if max_y - min_y < 1.0 {
            h / 2.0
        } else {
            (p.1 - min_y) / (max_y - min_y) * h
        };
    }
}

/// Every two-ended link of the topology, ports named as the devices name them (as `netgw links`).
fn all_links(topo: &Topology) -> Vec<Declared> {
    let every: BTreeSet<String> = topo.nodes.keys().cloned().collect();
    crate::links::declared(topo, &every).checked
}

/// A link's state in the last check: `up`, `missing` (not seen from one end or both), `unreadable`
/// (an end whose neighbours could not be read), `unchecked` (an end netgw does not drive), or `unknown` (no check has run).
fn link_state(l: &Declared, report: Option<&LinkReport>) -> (&'static str, String) {
    let Some(r) = report else {
        return ("unknown", "not checked yet".into());
    };
    if r.up.contains(l) {
        return ("up", "up: both ends see each other".into());
    }
    if let Some(m) = r.missing.iter().find(|m| &m.link == l) {
        return (
            "missing",
            format!("missing: not seen from {}", m.missing_on.join(" and ")),
        );
    }
    if let Some(u) = r.unreadable.iter().find(|u| &u.link == l) {
        return (
            "unreadable",
            format!(
                "unreadable: could not read {}'s neighbours",
                u.unreadable_on.join(" or ")
            ),
        );
    }
    (
        "unchecked",
        "not checked: an end netgw does not drive".into(),
    )
}

fn end(e: &crate::links::End) -> String {
    format!("{}:{}", e.node, e.port)
}

/// The SVG: links under nodes; each node a link to its page.
pub fn draw(
    topo: &Topology,
    states: &BTreeMap<String, (&'static str, String)>,
    report: Option<&LinkReport>,
) -> Markup {
    let names: Vec<&String> = topo.nodes.keys().collect();
    let index = |n: &str| names.iter().position(|x| x.as_str() == n);
    let links = all_links(topo);
    let edges: Vec<(usize, usize)> = links
        .iter()
        .filter_map(|l| Some((index(&l.a.node)?, index(&l.b.node)?)))
        .collect();
    let pos = layout(names.len(), &edges);
    let at = |n: &str| index(n).map(|i| pos[i]).unwrap_or((0.0, 0.0));
    let f = |v: f64| format!("{v:.1}");
    html! {
        figure.topology {
            svg #topology viewBox={ "0 0 " (WIDTH) " " (HEIGHT) } role="img" aria-labelledby="topo-title topo-desc" {
                title #topo-title { "Lab " (topo.name) ": " (names.len()) " nodes, " (links.len()) " links" }
                desc #topo-desc { "Nodes coloured by their last result, links by the last link check. The tables below say the same in words." }
                g.links {
                    @for l in &links {
                        @let (state, why) = link_state(l, report);
                        @let (a, b) = (at(&l.a.node), at(&l.b.node));
                        line.link.{"link-" (state)} x1=(f(a.0)) y1=(f(a.1)) x2=(f(b.0)) y2=(f(b.1))
                            data-a=(end(&l.a)) data-b=(end(&l.b)) data-state=(state) {
                            title { (end(&l.a)) " — " (end(&l.b)) ": " (why) }
                        }
                    }
                }
                g.nodes {
                    @for n in &names {
                        @let (state, label) = states.get(n.as_str()).cloned().unwrap_or(("unknown", "no result yet".into()));
                        @let p = at(n);
                        a.node href={ "/ui/nodes/" (n) } data-node=(n) data-status=(state) aria-label={ (n) ": " (label) } {
                            title { (n) ": " (label) }
                            circle.{"node-" (state)} cx=(f(p.0)) cy=(f(p.1)) r=(RADIUS) {}
                            text x=(f(p.0)) y=(f(p.1 + RADIUS + 16.0)) text-anchor="middle" { (n) }
                        }
                    }
                }
            }
        }
    }
}

pub fn legend() -> Markup {
    let nodes = [
        ("ok", "in sync / converged"),
        ("drift", "drift (why-run found changes)"),
        ("failed", "failed"),
        ("running", "running now"),
        ("unknown", "no result yet"),
    ];
    let links = [
        ("up", "link up"),
        ("missing", "link missing"),
        ("unchecked", "not checked (undriven end)"),
        ("unknown", "no link check yet"),
    ];
    html! {
        ul.legend aria-label="Legend" {
            @for (c, t) in nodes { li { span.swatch.{"node-" (c)} aria-hidden="true" {} (t) } }
            @for (c, t) in links { li { span.swatch.line.{"link-" (c)} aria-hidden="true" {} (t) } }
        }
    }
}

/// The links in words (the drawing's text alternative), and what LLDP saw that nothing declares.
pub fn link_table(topo: &Topology, report: Option<&LinkReport>) -> Markup {
    let links = all_links(topo);
    html! {
        h2 { "Links" }
        div.scroll { table #links {
            thead { tr { th scope="col" { "From" } th scope="col" { "To" } th scope="col" { "State" } } }
            tbody {
                @for l in &links {
                    @let (state, why) = link_state(l, report);
                    tr data-state=(state) {
                        td { (end(&l.a)) } td { (end(&l.b)) }
                        td { span.status.{"link-" (state)} { (why) } }
                    }
                }
            }
        } }
        @if let Some(r) = report {
            @if !r.undeclared.is_empty() {
                h3 { "Seen by LLDP, not declared" }
                ul #undeclared { @for u in &r.undeclared { li { (u.node) ":" (u.port) " sees " (u.peer) ":" (u.peer_port) } } }
            }
            @if !r.errors.is_empty() {
                h3 { "Not read" }
                ul { @for (n, e) in &r.errors { li { (n) ": " (e) } } }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fabric() -> (usize, Vec<(usize, usize)>) {
        // spine1, spine2 (0, 1) to leaf1..leaf4 (2..6): a two-tier Clos.
        let mut e = Vec::new();
        for s in 0..2 {
            for l in 2..6 {
                e.push((s, l));
            }
        }
        (6, e)
    }

    #[test]
    fn the_layout_is_deterministic_inside_the_drawing_and_keeps_nodes_apart() {
        let (n, e) = fabric();
        let a = layout(n, &e);
        assert_eq!(a, layout(n, &e), "same input, same drawing");
        for &(x, y) in &a {
            assert!(
                (MARGIN..=WIDTH - MARGIN).contains(&x) && (MARGIN..=HEIGHT - MARGIN).contains(&y),
                "{x},{y}"
            );
        }
        for i in 0..n {
            for j in i + 1..n {
                let d = ((a[i].0 - a[j].0).powi(2) + (a[i].1 - a[j].1).powi(2)).sqrt();
                assert!(d > 2.0 * RADIUS, "nodes {i} and {j} overlap: {d}");
            }
        }
    }

    #[test]
    fn linked_nodes_end_nearer_than_unlinked_ones_on_average() {
        // Two triangles joined by one link: the layout must keep each triangle together.
        let e = [(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3), (2, 3)];
        let p = layout(6, &e);
        let d = |i: usize, j: usize| ((p[i].0 - p[j].0).powi(2) + (p[i].1 - p[j].1).powi(2)).sqrt();
        let linked = (d(0, 1) + d(1, 2) + d(0, 2) + d(3, 4) + d(4, 5) + d(3, 5)) / 6.0;
        let apart = (d(0, 4) + d(0, 5) + d(1, 4) + d(1, 5)) / 4.0;
        assert!(linked < apart, "{linked} vs {apart}: {p:?}");
    }

    #[test]
    fn no_node_or_one_node_or_bad_edges_do_not_break_it() {
        assert!(layout(0, &[]).is_empty());
        let one = layout(1, &[(0, 0), (0, 7)]);
        assert_eq!(one, vec![(WIDTH / 2.0, HEIGHT / 2.0)]);
    }
}
