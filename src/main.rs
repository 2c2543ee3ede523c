//! The `netgw` binary: parse arguments, set up tracing, call the library.

fn main() -> std::process::ExitCode {
    netgw::cli::main()
}
