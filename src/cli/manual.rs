//! `netgw completions SHELL` and `netgw man`: shell completions and man pages generated from the
//! clap definition itself, so they list exactly the commands and options this binary takes.

use super::*;
use clap::CommandFactory;

/// The completion script for `shell`, on `out`.
pub(super) fn completions_cmd(
    shell: clap_complete::Shell,
    out: &mut dyn Write,
) -> Result<Status, Failure> {
    let mut cmd = Cli::command();
    clap_complete::generate(shell, &mut cmd, "netgw", out);
    Ok(Status::Ok)
}

/// netgw(1) on `out`; with `dir`, netgw.1 and a page for each command (netgw-converge.1, ...)
/// written there, and their names on `out`.
pub(super) fn man_cmd(
    dir: Option<&std::path::Path>,
    out: &mut dyn Write,
) -> Result<Status, Failure> {
    let cmd = Cli::command();
    let Some(dir) = dir else {
        clap_mangen::Man::new(cmd).render(out)?;
        return Ok(Status::Ok);
    };
    let fail =
        |e: std::io::Error| Failure::usage(format!("writing man pages to {}: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(fail)?;
    clap_mangen::generate_to(cmd, dir).map_err(fail)?;
    let mut pages: Vec<String> = std::fs::read_dir(dir)
        .map_err(fail)?
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with("netgw") && n.ends_with(".1"))
        .collect();
    pages.sort();
    for p in pages {
        writeln!(out, "{}", dir.join(p).display())?;
    }
    Ok(Status::Ok)
}
