//! Line diffs for the devices' own "show me the change" commands (EOS `show session-config diffs`,
//! Junos `show | compare`). Longest common subsequence over lines: configurations are small.

/// One line of a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffLine<'a> {
    Same(&'a str),
    Del(&'a str),
    Add(&'a str),
}

/// Lines of `a` and `b` aligned by their longest common subsequence.
pub fn diff_lines<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<DiffLine<'a>> {
    let (n, m) = (a.len(), b.len());
    // lcs[i][j] = LCS length of a[i..], b[j..]
    let mut lcs = vec![0u32; (n + 1) * (m + 1)];
    let idx = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[idx(i, j)] = if a[i] == b[j] {
                lcs[idx(i + 1, j + 1)] + 1
            } else {
                lcs[idx(i + 1, j)].max(lcs[idx(i, j + 1)])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            out.push(DiffLine::Same(a[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[idx(i + 1, j)] >= lcs[idx(i, j + 1)]) {
            // Deletions before additions, as diff(1) prints them.
            out.push(DiffLine::Del(a[i]));
            i += 1;
        } else {
            out.push(DiffLine::Add(b[j]));
            j += 1;
        }
    }
    out
}

/// A unified diff (`---`/`+++` headers, `@@` hunks with 3 lines of context); empty when equal.
pub fn unified(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let d = diff_lines(&a, &b);
    if d.iter().all(|l| matches!(l, DiffLine::Same(_))) {
        return String::new();
    }
    const CTX: usize = 3;
    let changed: Vec<usize> = d
        .iter()
        .enumerate()
        .filter(|(_, l)| !matches!(l, DiffLine::Same(_)))
        .map(|(i, _)| i)
        .collect();
    // Group changes into hunks whose context overlaps.
    let mut hunks: Vec<(usize, usize)> = Vec::new();
    for &c in &changed {
        let lo = c.saturating_sub(CTX);
        let hi = (c + CTX + 1).min(d.len());
        match hunks.last_mut() {
            Some((_, h)) if lo <= *h => *h = hi,
            _ => hunks.push((lo, hi)),
        }
    }
    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    for (lo, hi) in hunks {
        let (mut old_start, mut new_start) = (1, 1);
        for l in &d[..lo] {
            match l {
                DiffLine::Same(_) => {
                    old_start += 1;
                    new_start += 1;
                }
                DiffLine::Del(_) => old_start += 1,
                DiffLine::Add(_) => new_start += 1,
            }
        }
        let old_len = d[lo..hi]
            .iter()
            .filter(|l| !matches!(l, DiffLine::Add(_)))
            .count();
        let new_len = d[lo..hi]
            .iter()
            .filter(|l| !matches!(l, DiffLine::Del(_)))
            .count();
        out.push_str(&format!(
            "@@ -{old_start},{old_len} +{new_start},{new_len} @@\n"
        ));
        for l in &d[lo..hi] {
            match l {
                DiffLine::Same(s) => out.push_str(&format!(" {s}\n")),
                DiffLine::Del(s) => out.push_str(&format!("-{s}\n")),
                DiffLine::Add(s) => out.push_str(&format!("+{s}\n")),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unified_hunks() {
        let a = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let b = "a\nb\nc\nX\ne\nf\ng\nh\n";
        let u = unified(a, b, "x", "y");
        assert_eq!(
            u,
            "--- x\n+++ y\n@@ -1,7 +1,7 @@\n a\n b\n c\n-d\n+X\n e\n f\n g\n"
        );
        assert_eq!(unified(a, a, "x", "y"), "");
    }
}
