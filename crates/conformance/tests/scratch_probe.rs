use conformance::random::{self, Config};
#[test]
fn dump() {
    let seed: u64 = std::env::var("S").ok().and_then(|s| s.parse().ok()).unwrap_or(7);
    let k = random::generate(seed, &Config::known_good());
    std::fs::write("/tmp/sample.ptx", k.ptx()).unwrap();
}
