//! The `netgw` binary: parse arguments, set up tracing, call the library.
//!
//! jemalloc as the allocator: a converge allocates and frees many small, short-lived values per device
//! (SSH packets, CLI lines, JSON trees) on tasks that move between worker threads, while the reports of
//! every finished device stay allocated until the run ends. glibc's malloc spent a quarter of a
//! 1,000-device run's CPU in `malloc`/`free`/`malloc_consolidate` and grew worse with the heap: at 10,000
//! IOS devices, an unchanged run took 61 CPU-s with it and 45 with jemalloc, peak RSS the same
//! (docs/bench.md, "The allocator"). mimalloc was faster still at 1,000 but doubled the peak RSS.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    netgw::cli::main(|args, store, cookbook_server| {
        netgw::api::main_blocking(args, store, cookbook_server).map_err(|e| e.to_string())
    })
}
