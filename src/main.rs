//! The `leafctl` command: parse, call the library, print. See `leafctl --help`.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
