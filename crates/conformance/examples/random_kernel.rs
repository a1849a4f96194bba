//! Prints the random kernel of a seed: `cargo run -p conformance --example random_kernel -- SEED [whole_cta|vectorizable|barriers]`.
fn main() {
    let mut args = std::env::args().skip(1);
    let seed = args.next().map(|s| u64::from_str_radix(s.trim_start_matches("0x"), 16).expect("hex seed")).unwrap_or(0);
    let config = match args.next().as_deref() {
        Some("whole_cta") => conformance::random::Config::whole_cta(),
        Some("vectorizable") => conformance::random::Config::vectorizable(),
        Some("barriers") => conformance::random::Config::vectorizable_with_barriers(),
        _ => conformance::random::Config::known_good(),
    };
    print!("{}", conformance::random::generate(seed, &config).ptx());
}
