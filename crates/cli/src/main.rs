//! The `lockstep` command: argument parsing, output formats and progress. Glue only; the work happens in the
//! library crates.

mod analyze_cmd;
mod demo;
mod exec_cmd;
mod output;
mod ptx_cmd;
mod run_cmd;
mod stats_text;
mod trace_cmd;
mod transit_cmd;
mod validate_cmd;

use std::fmt;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "lockstep",
    version,
    about = "Move programs between MIMD CPUs and SIMT GPUs, and explain the throughput of multithreaded machines",
    long_about = "lockstep reads PTX (the assembly language of NVIDIA GPUs), builds its control-flow graphs and \
                  finds where the threads of a warp diverge and reconverge.\n\n\
                  Start with `lockstep demo`, then try `lockstep ptx check kernel.ptx` and `lockstep run --help`."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Work with PTX files: check them, print them canonically, draw their control-flow graphs.
    #[command(subcommand)]
    Ptx(PtxCommand),
    /// Run a built-in tour of what lockstep does, on a kernel that ships inside the binary.
    Demo,
    #[command(about = run_cmd::ABOUT, long_about = run_cmd::LONG_ABOUT, after_help = run_cmd::SHORT_EXAMPLE, after_long_help = run_cmd::EXAMPLES)]
    Run(run_cmd::RunArgs),
    #[command(about = exec_cmd::ABOUT, long_about = exec_cmd::LONG_ABOUT, after_long_help = exec_cmd::EXAMPLES)]
    Exec(exec_cmd::ExecArgs),
    #[command(about = trace_cmd::ABOUT, long_about = trace_cmd::LONG_ABOUT, after_long_help = trace_cmd::EXAMPLES)]
    Trace(trace_cmd::TraceArgs),
    #[command(about = analyze_cmd::ABOUT, long_about = analyze_cmd::LONG_ABOUT, after_long_help = analyze_cmd::EXAMPLES)]
    Analyze(analyze_cmd::AnalyzeArgs),
    #[command(about = transit_cmd::ABOUT, long_about = transit_cmd::LONG_ABOUT, after_help = transit_cmd::SHORT_EXAMPLE, after_long_help = transit_cmd::EXAMPLES)]
    Transit(transit_cmd::TransitArgs),
    #[command(about = validate_cmd::ABOUT, long_about = validate_cmd::LONG_ABOUT, after_long_help = validate_cmd::EXAMPLES)]
    Validate(validate_cmd::ValidateArgs),
}

/// A command line that asks for something impossible (a bad argument, a missing kernel): reported like
/// clap's own usage errors, with exit status 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

#[derive(Subcommand, Debug)]
enum PtxCommand {
    /// Parse and verify PTX files; print the kernels, functions and instructions of each.
    ///
    /// Exits with status 1 and prints every diagnostic (file:line:column, the offending text and what was
    /// expected) when a file does not parse or verify. All files are checked even when one fails.
    ///
    /// Example: lockstep ptx check kernels/*.ptx
    Check {
        /// PTX files to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print one JSON object per run (an array of per-file results) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Print a PTX file in canonical form (flat scopes, one statement per line, exact immediates).
    ///
    /// The output parses again to the same IR. Example: lockstep ptx print kernel.ptx -o canonical.ptx
    Print {
        file: PathBuf,
        /// Write to this file (atomically) instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Print a function's control-flow graph as Graphviz DOT, annotated with immediate post-dominators.
    ///
    /// The immediate post-dominator of a branching block is where the threads of a warp that diverged there
    /// reconverge. Render with: lockstep ptx cfg kernel.ptx --kernel NAME | dot -Tsvg > cfg.svg
    Cfg {
        file: PathBuf,
        /// The kernel or device function to draw; may be omitted when the module defines one function.
        #[arg(short, long)]
        kernel: Option<String>,
        /// Write to this file (atomically) instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Print the blocks, edges, reconvergence points and loops as JSON instead of DOT.
        #[arg(long)]
        json: bool,
    },
    /// Which PTX instructions lockstep runs: every instruction variant of the PTX ISA 9.x, on both engines,
    /// the emulator only, or refused (with the reason).
    ///
    /// Each row is a sample instruction compiled in a small kernel and checked by the front end, the
    /// emulator's decoder and the JIT's compiler, so the table is what the code does. Filter with a word
    /// (matched against the section and the instruction). The committed docs/ptx-isa.md is its --markdown.
    ///
    /// Examples: lockstep ptx isa | lockstep ptx isa mma | lockstep ptx isa --json
    Isa {
        /// Only rows whose section or instruction contains this text.
        filter: Option<String>,
        /// Print JSON (an array of {section, instruction, ptx, status, reason}).
        #[arg(long, conflicts_with = "markdown")]
        json: bool,
        /// Print the Markdown table (docs/ptx-isa.md).
        #[arg(long)]
        markdown: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Ptx(PtxCommand::Check { files, json }) => ptx_cmd::check(&files, json),
        Command::Ptx(PtxCommand::Print { file, output }) => ptx_cmd::print(&file, output.as_deref()),
        Command::Ptx(PtxCommand::Cfg { file, kernel, output, json }) => {
            ptx_cmd::cfg(&file, kernel.as_deref(), output.as_deref(), json)
        }
        Command::Ptx(PtxCommand::Isa { filter, json, markdown }) => ptx_cmd::isa(filter.as_deref(), json, markdown),
        Command::Demo => demo::run(),
        Command::Run(args) => run_cmd::run(&args),
        Command::Exec(args) => exec_cmd::run(&args),
        Command::Trace(args) => trace_cmd::run(&args),
        Command::Analyze(args) => analyze_cmd::run(&args),
        Command::Transit(args) => transit_cmd::run(&args),
        Command::Validate(args) => validate_cmd::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            if e.downcast_ref::<UsageError>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
